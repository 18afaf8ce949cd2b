"""The `math` kind, table-driven: (prediction, gold, expected verdict), one comment per case.

Runs the kind function in-process (no worker pool), so the whole table takes a few seconds.
Negatives are as important as positives: math-verify's own suite is mostly positive cases, so it
measures recall, not precision.
"""

from __future__ import annotations

import pytest

from verifiers.math_kind import verify_math
from verifiers.types import Verdict

OK, NO, NA, BG = Verdict.CORRECT, Verdict.INCORRECT, Verdict.NO_ANSWER, Verdict.BAD_GOLD

CASES = [
    # ---- extraction: boxed, "answer is", final line / last number
    (r"\boxed{42}", "42", OK),  # bare boxed integer
    (r"We compute 6*7. \boxed{42}", "42", OK),  # boxed after working
    (r"$\boxed{42}$", "42", OK),  # boxed inside inline math
    (r"\[ x = \boxed{42} \]", "42", OK),  # boxed inside display math with an assignment around it
    (r"First \boxed{41}, no wait: \boxed{42}", "42", NO),  # two boxes are read as the set {41, 42}: a hedge earns nothing
    (r"\boxed{41}", "42", NO),  # boxed wrong integer
    (r"The answer is 42.", "42", OK),  # "answer is" sentence
    (r"The answer is 43.", "42", NO),  # "answer is" with the wrong number
    (r"Answer: 42", "42", OK),  # "Answer:" label
    (r"Answer: 41", "42", NO),  # "Answer:" label, wrong
    (r"I got 40 at first. The answer is 42", "42", OK),  # earlier numbers are ignored
    (r"The answer is 42. Check: 40 + 2", "42", OK),  # the answer statement beats a later number
    (r"So the final answer is $42$. I hope it is correct.", "42", OK),  # the "I hope" template
    (r"So the final answer is $41$. I hope it is correct.", "42", NO),  # same template, wrong
    (r"Adding them up we get 42", "42", OK),  # last number of plain text
    (r"Adding them up we get 41", "42", NO),  # last number of plain text, wrong
    ("Work...\n42", "42", OK),  # answer alone on the last line
    ("Work...\n24", "42", NO),  # digits swapped
    (r"42", "42", OK),  # the whole prediction is the number
    (r"The answer is **42**.", "42", OK),  # markdown bold
    (r"The answer is +5.", "5", OK),  # explicit plus sign
    (r"The answer is -5.", "5", NO),  # sign error
    (r"The answer is -5.", "-5", OK),  # negative gold
    (r"$-5$", "-5", OK),  # negative in math mode
    (r"x = -5", "-5", OK),  # assignment in plain text
    ("", "5", NA),  # empty prediction
    ("   \n  ", "5", NA),  # whitespace only
    ("I don't know.", "5", NA),  # no number, no math
    ("The answer is unclear.", "5", NA),  # answer sentence without a value
    # ---- integers with separators
    ("1,234", "1234", OK),  # comma thousands separator
    (r"\boxed{1,234}", "1234", OK),  # separator inside a box
    ("The answer is 1,234,567.", "1234567", OK),  # two separators
    ("1234", "1,234", OK),  # separator in the gold
    ("1,235", "1,234", NO),  # off by one with separators
    ("The answer is 1,234,568.", "1234567", NO),  # off by one, two separators
    ("007", "7", OK),  # leading zeros
    ("100000001", "100000000", NO),  # large integers compare exactly
    ("123456789012345678901", "123456789012345678901", OK),  # beyond float precision, equal
    ("123456789012345678902", "123456789012345678901", NO),  # beyond float precision, differ by 1
    # ---- decimals, tiny and huge values (math-verify rounds to 6 decimals: fixed here)
    ("0.5", "0.5", OK),  # same decimal
    ("0.50", "0.5", OK),  # trailing zero
    ("0.51", "0.5", NO),  # different decimal
    ("0.0000002", "0.0000001", NO),  # tiny values differ by 2x (anchor: equal after rounding)
    ("0.0000001", "0.0000001", OK),  # tiny values equal
    ("0.00000010", "0.0000001", OK),  # tiny, trailing zero
    ("0.000000011", "0.00000001", NO),  # tiny, 10% apart
    (r"$\frac{1}{2^{98}}$", r"\frac{1}{2^{99}}", NO),  # 1/2^98 vs 1/2^99: exact, differ
    (r"$\frac{1}{2^{99}}$", r"\frac{1}{2^{99}}", OK),  # 1/2^99 equal
    (r"$2^{-99}$", r"\frac{1}{2^{99}}", OK),  # negative exponent form
    (r"$10^{-7}$", "0.0000001", OK),  # power of ten vs decimal
    (r"$2 \cdot 10^{-7}$", "0.0000001", NO),  # scientific form, 2x apart
    (r"$1.5 \times 10^{20}$", r"1.5 \times 10^{20}", OK),  # huge, same
    (r"$1.5 \times 10^{20}$", r"1.6 \times 10^{20}", NO),  # huge, 7% apart
    ("150000000000000000001", "150000000000000000000", NO),  # huge exact integers differ by one
    ("3.14159", "3.14159", OK),  # same decimal
    ("3.1416", "3.14159", NO),  # 4-digit rounding of a 6-digit gold
    # ---- fractions and decimals
    ("1/2", "0.5", OK),  # slash fraction vs decimal
    (r"$\frac{1}{2}$", "0.5", OK),  # latex fraction vs decimal
    (r"$\dfrac{1}{2}$", "0.5", OK),  # dfrac
    (r"$\frac12$", r"\frac{1}{2}", OK),  # brace-less \frac12
    (r"\boxed{\frac{2}{4}}", r"\frac{1}{2}", OK),  # unreduced fraction
    (r"\boxed{\frac{1}{3}}", r"\frac{1}{2}", NO),  # different fraction
    ("0.333333", r"\frac{1}{3}", OK),  # 6 significant digits of 1/3
    ("0.142857", r"\frac{1}{7}", OK),  # 6 significant digits of 1/7
    ("0.33", r"\frac{1}{3}", NO),  # too coarse to be 1/3
    ("0.3333", r"\frac{1}{3}", OK),  # rounding policy: 4 significant digits, correctly rounded
    ("0.33", r"\frac{1}{3}", NO),  # 2 significant digits: below the policy's floor of 3
    ("0.333334", r"\frac{1}{3}", NO),  # wrongly rounded
    ("The answer is 3/4.", "0.75", OK),  # fraction followed by a period stays exact
    ("The answer is 3/4.", "0.76", NO),  # fraction vs a different decimal
    (r"$-\frac{3}{4}$", "-0.75", OK),  # negative fraction
    (r"$\frac{-3}{4}$", r"-\frac{3}{4}", OK),  # sign inside the numerator
    (r"$\frac{3}{4}$", r"-\frac{3}{4}", NO),  # sign lost
    (r"$1\frac{1}{2}$", "1.5", OK),  # mixed number 1 1/2 = 3/2
    ("The answer is 7/2", r"3\frac{1}{2}", OK),  # mixed number gold 3 1/2 = 7/2
    ("The answer is 5/2", r"3\frac{1}{2}", NO),  # mixed number gold, wrong value
    # ---- radicals and constants
    (r"$3\sqrt{2}$", r"\sqrt{18}", OK),  # simplified radical
    (r"$\sqrt{18}$", r"3\sqrt{2}", OK),  # unsimplified radical
    (r"$2\sqrt{3}$", r"3\sqrt{2}", NO),  # different radical
    (r"$\frac{\sqrt{2}}{2}$", r"\frac{1}{\sqrt{2}}", OK),  # rationalised denominator
    (r"$\sqrt{2}/2$", r"\frac{\sqrt{2}}{2}", OK),  # slash form inside math
    (r"$\sqrt[3]{8}$", "2", OK),  # cube root evaluates
    (r"$\sqrt[3]{9}$", "2", NO),  # cube root of 9 is not 2
    (r"$\sqrt{2}+\sqrt{3}$", r"\sqrt{5+2\sqrt{6}}", OK),  # nested radical identity
    (r"$\sqrt{2}+\sqrt{3}$", r"\sqrt{5+2\sqrt{5}}", NO),  # close but different nested radical
    (r"$\pi$", r"\pi", OK),  # pi symbol
    (r"$2\pi$", r"\pi", NO),  # 2 pi
    (r"$\frac{\pi}{2}$", r"\frac{\pi}{2}", OK),  # pi over 2
    (r"$\frac{\pi}{3}$", r"\frac{\pi}{2}", NO),  # different angle
    ("3.14159", r"\pi", OK),  # pi to 6 significant digits
    ("3.14", r"\pi", OK),  # rounding policy: pi correctly rounded to 3 significant digits
    ("3.15", r"\pi", NO),  # not a correct rounding of pi
    ("3", r"\pi", NO),  # no decimal written: an integer is exact
    (r"$e^{2}$", "e^2", OK),  # Euler's number squared
    (r"$e^{3}$", "e^2", NO),  # wrong power
    (r"$\ln 8$", r"3\ln 2", OK),  # logarithm identity
    (r"$\ln 9$", r"3\ln 2", NO),  # log of the wrong number
    (r"$\infty$", r"\infty", OK),  # infinity
    (r"$-\infty$", r"\infty", NO),  # minus infinity
    (r"$\sin\frac{\pi}{6}$", r"\frac{1}{2}", OK),  # trig value
    (r"$\cos\frac{\pi}{6}$", r"\frac{1}{2}", NO),  # the other trig value
    (r"$\binom{5}{2}$", "10", OK),  # binomial coefficient evaluates
    (r"$5!$", "120", OK),  # factorial evaluates
    (r"$6!$", "120", NO),  # wrong factorial
    # ---- expressions
    (r"$(x+1)^2$", r"x^2+2x+1", OK),  # expanded vs factored
    (r"$x^2+2x+1$", r"(x+1)^2", OK),  # factored gold, expanded prediction
    (r"$x^2+2x+2$", r"(x+1)^2", NO),  # off by a constant
    (r"$x^2+2x-1$", r"(x+1)^2", NO),  # sign of the constant
    (r"$2x+1$", r"1+2x", OK),  # reordered terms
    (r"$2y+1$", r"2x+1", NO),  # different variable (strict)
    (r"$\frac{x}{2}$", r"0.5x", OK),  # fraction vs decimal coefficient
    (r"$\frac{x^2-1}{x-1}$", "x+1", OK),  # cancels symbolically
    (r"$\frac{a+b}{2}$", r"\frac{b+a}{2}", OK),  # commutativity
    (r"$ab$", "ba", OK),  # product of symbols
    (r"$a-b$", "b-a", NO),  # subtraction order matters
    (r"$\sin^2 x + \cos^2 x$", "1", OK),  # Pythagorean identity
    (r"$2\sin x\cos x$", r"\sin 2x", OK),  # double angle identity
    (r"$2\sin x\cos x$", r"\cos 2x", NO),  # wrong double-angle identity
    (r"\boxed{x^2+1}", "x^2+1", OK),  # identical expression in a box
    (r"\boxed{x^2-1}", "x^2+1", NO),  # one sign differs
    (r"$5t$", "5t", OK),  # a variable answer with the same variable
    (r"$5$", "5t", NO),  # unit-stripping bug: 5 is not 5t (anchor says equal)
    (r"$5t$", "5", NO),  # 5t is not 5 either: a glued letter is a variable
    ("It takes 5t", "5", NO),  # plain text: the glued letter is kept, not dropped as 5
    ("The answer is 5t.", "5t", OK),  # plain-text variable answer read as 5*t, like the gold
    ("5t", "5t", OK),  # bare plain-text variable answer
    (r"$3x$", "3x", OK),  # x is never a unit
    (r"$3y$", "3x", NO),  # different variable
    (r"$5m$", "5m", OK),  # m glued to the number: a variable
    # ---- units (separated units are removed)
    (r"$5 \text{ cm}$", "5", OK),  # separated unit in text
    ("5 cm", "5", OK),  # separated unit in plain text
    (r"$5\ \mathrm{kg}$", "5", OK),  # mathrm unit
    (r"$6 \text{ cm}$", "5", NO),  # unit with the wrong value
    ("12 meters", "12", OK),  # unit word
    ("The answer is 12 dollars.", "12", OK),  # currency word
    (r"The answer is \$12.", "12", OK),  # escaped dollar sign
    ("$12", "12", OK),  # dollar prefix in plain text
    ("$13", "12", NO),  # dollar prefix, wrong value
    (r"$5\text{ cm}^2$", r"5 \text{ cm}^2", OK),  # unit with a power on both sides
    (r"$5\text{ cm}$", r"5\text{ cm}", OK),  # gold with a unit too
    # ---- percent
    (r"$50\%$", r"50\%", OK),  # same percentage
    ("50%", r"50\%", OK),  # plain percent sign
    ("0.5", r"50\%", OK),  # percent as a fraction
    ("50", r"50\%", OK),  # bare number of a percentage
    (r"$40\%$", r"50\%", NO),  # different percentage
    ("0.4", r"50\%", NO),  # different fraction
    ("50 percent", "50", OK),  # percent word vs number
    (r"$12.5\%$", r"12.5\%", OK),  # decimal percentage
    # ---- degrees
    (r"$30^\circ$", "30", OK),  # degree sign vs number
    (r"$30^{\circ}$", r"30^\circ", OK),  # braced degree sign
    ("30 degrees", "30", OK),  # degree word
    (r"$45^\circ$", "30", NO),  # wrong angle
    (r"$60^\circ$", r"30^\circ", NO),  # wrong angle, both with degrees
    # ---- equations and assignments
    (r"$x=2$", "2", OK),  # assignment vs value
    ("2", r"x=2", OK),  # value vs assignment gold
    (r"$x=3$", "2", NO),  # assignment to the wrong value
    (r"$y=2x+1$", r"y=2x+1", OK),  # same line
    (r"$y=1+2x$", r"y=2x+1", OK),  # reordered right-hand side
    (r"$y=2x-1$", r"y=2x+1", NO),  # different intercept
    (r"$2x+y=1$", r"y=1-2x", OK),  # rearranged equation
    (r"$x+y=1$", r"y=1-2x", NO),  # different line
    (r"$2y=6x+24$", r"y=3x+12", OK),  # a multiple of the same linear equation
    (r"$y=3z+12$", r"y=3x+12", NO),  # same shape, other variable
    (r"$x^2=4$", r"x^2=4", OK),  # same equation
    (r"$x \le 3$", r"x \le 3", OK),  # inequality
    (r"$3 \ge x$", r"x \le 3", OK),  # flipped inequality
    (r"$x < 3$", r"x \le 3", NO),  # strict vs non-strict
    (r"$x \ge 3$", r"x \le 3", NO),  # wrong direction
    (r"$x = 1, y = 2$", r"x=1, y=2", OK),  # system solution
    (r"$x = 2, y = 1$", r"x=1, y=2", NO),  # swapped system solution
    # ---- sets
    (r"$\{1,2,3\}$", r"\{1,2,3\}", OK),  # same set
    (r"$\{3,1,2\}$", r"\{1,2,3\}", OK),  # order does not matter in a set
    (r"$\{1,2\}$", r"\{1,2,3\}", NO),  # missing element
    (r"$\{1,2,4\}$", r"\{1,2,3\}", NO),  # wrong element
    (r"$\{0.0000002\}$", r"\{0.0000001\}", NO),  # tiny values inside a set
    (r"$\{\frac{1}{2}, 2\}$", r"\{0.5, 2\}", OK),  # fraction vs decimal inside a set
    (r"$x = 1$ or $x = -1$", r"\{-1, 1\}", OK),  # two roots stated in words
    (r"$1, -1$", r"\{-1, 1\}", OK),  # bare list vs set
    (r"$1, 2$", r"\{-1, 1\}", NO),  # bare list, wrong values
    (r"$\emptyset$", r"\emptyset", OK),  # empty set
    (r"$\{1\}$", r"\emptyset", NO),  # non-empty vs empty
    # ---- tuples and points
    (r"$(1,2)$", "(1,2)", OK),  # same pair
    (r"$(2,1)$", "(1,2)", NO),  # order matters in a pair
    (r"$(1,2,3)$", "(1,2,3)", OK),  # triple
    (r"$(1,2,4)$", "(1,2,3)", NO),  # triple, last coordinate wrong
    (r"$(\frac{1}{2}, 3)$", "(0.5, 3)", OK),  # fraction vs decimal coordinate
    (r"$(0.0000002, 3)$", "(0.0000001, 3)", NO),  # tiny coordinate differs
    (r"$\left(1, 2\right)$", "(1,2)", OK),  # \left( \right)
    ("The point is (1, 2).", "(1,2)", NO),  # a plain-text pair is not extracted as a pair (math-verify limit): last number 2
    # ---- intervals
    (r"$[1,2)$", "[1,2)", OK),  # same half-open interval
    (r"$[1,2]$", "[1,2)", NO),  # closed vs half-open
    (r"$(1,2]$", "[1,2)", NO),  # the other half-open
    (r"$(-\infty, 3]$", r"(-\infty,3]", OK),  # unbounded interval
    (r"$(-\infty, 3)$", r"(-\infty,3]", NO),  # open end differs
    (r"$[0, \infty)$", r"[0,\infty)", OK),  # to infinity
    (r"$(-\infty,1)\cup(2,\infty)$", r"(-\infty,1)\cup(2,\infty)", OK),  # union of intervals
    (r"$(-\infty,1)\cup(3,\infty)$", r"(-\infty,1)\cup(2,\infty)", NO),  # union, one end differs
    (r"$x \in [1,2)$", "[1,2)", OK),  # membership form
    # ---- matrices and vectors
    (r"$\begin{pmatrix}1 & 2\\3 & 4\end{pmatrix}$", r"\begin{pmatrix}1 & 2\\3 & 4\end{pmatrix}", OK),  # same matrix
    (r"$\begin{pmatrix}1 & 2\\3 & 5\end{pmatrix}$", r"\begin{pmatrix}1 & 2\\3 & 4\end{pmatrix}", NO),  # one entry differs
    (r"$\begin{bmatrix}1 & 2\\3 & 4\end{bmatrix}$", r"\begin{pmatrix}1 & 2\\3 & 4\end{pmatrix}", OK),  # bmatrix vs pmatrix
    (r"$\begin{pmatrix}2 & 1\\4 & 3\end{pmatrix}$", r"\begin{pmatrix}1 & 2\\3 & 4\end{pmatrix}", NO),  # columns swapped
    (r"$\begin{pmatrix}1\\2\end{pmatrix}$", r"\begin{pmatrix}1\\2\end{pmatrix}", OK),  # column vector
    (r"$\begin{pmatrix}2\\1\end{pmatrix}$", r"\begin{pmatrix}1\\2\end{pmatrix}", NO),  # column vector reversed
    (r"$\begin{pmatrix}0.5\\2\end{pmatrix}$", r"\begin{pmatrix}\frac{1}{2}\\2\end{pmatrix}", OK),  # decimal entry
    (r"$\begin{pmatrix}0.0000002\\2\end{pmatrix}$", r"\begin{pmatrix}0.0000001\\2\end{pmatrix}", NO),  # tiny entry differs
    # ---- complex numbers
    (r"$3i+2$", "2+3i", OK),  # reordered complex number
    (r"$2-3i$", "2+3i", NO),  # conjugate
    (r"$\frac{1}{i}$", "-i", OK),  # 1/i = -i
    (r"$i^2$", "-1", OK),  # i squared
    (r"$i^2$", "1", NO),  # i squared is not 1
    (r"$(1+i)^2$", "2i", OK),  # expands to 2i
    (r"$\sqrt{-4}$", "2i", OK),  # square root of a negative
    # ---- text answers
    (r"$\text{Monday}$", r"\text{Monday}", OK),  # same text in math
    ("The answer is Monday.", r"\text{Monday}", OK),  # text in a sentence
    (r"\boxed{\text{monday}}", r"\text{Monday}", OK),  # case-folded text in a box
    ("The answer is Tuesday.", r"\text{Monday}", NO),  # different day
    (r"\boxed{\text{Tuesday}}", r"\text{Monday}", NO),  # different day in a box
    ("Answer: yes", "yes", OK),  # yes/no question
    ("Answer: no", "yes", NO),  # wrong yes/no
    (r"\boxed{\text{odd}}", r"\text{odd}", OK),  # parity
    (r"\boxed{\text{even}}", r"\text{odd}", NO),  # wrong parity
    # ---- multiple choice through the math kind
    (r"\boxed{B}", "B", OK),  # boxed letter vs letter gold (anchor: symbol b, gold unparsed)
    (r"\boxed{B}", "(B)", OK),  # parenthesised gold
    (r"\boxed{(B)}", "B", OK),  # parenthesised prediction
    (r"\boxed{C}", "B", NO),  # wrong letter
    ("The answer is (B).", "B", OK),  # sentence
    ("The answer is (D).", "B", NO),  # sentence, wrong letter
    (r"\boxed{A} or \boxed{B}", "B", NO),  # hedging between two letters is never rewarded
    ("I choose nothing.", "B", NA),  # no letter at all
    (r"\boxed{\text{B}}", r"\boxed{B}", OK),  # text-wrapped letter, boxed gold
    # ---- equations whose right side is a list, a tuple or an interval (were ERROR: sympy cannot subtract a set)
    ("$n=1, 2, 3$", "n=1, 2, 3", OK),  # a list after an equals sign, same on both sides
    ("$n=2, 3, 4$", "n=1, 2, 3", NO),  # the same name with other values
    ("$1, 2, 3$", "n=1, 2, 3", OK),  # the values alone answer the assignment
    ("$m=1, 2, 3$", "n=1, 2, 3", NO),  # same values assigned to another name (strict)
    ("$D = (0, 1)$", "D = (0, 1)", OK),  # an interval after an equals sign
    ("$D = (0, 1.5)$", "D = (0, 1)", NO),  # one end differs
    ("$D = [0, 1)$", "D = (0, 1)", NO),  # one end closed
    ("$(0, 1)$", "D = (0, 1)", OK),  # the interval alone
    # ---- solution sets: sets of tuples, unordered pairs, several boxed answers (were ERROR on tuples)
    (r"$\boxed{(7,11),\ (11,7)}$", "(11,7)or(7,11)", OK),  # both ordered pairs, other order and joiner
    (r"$\boxed{(11,7)}$", "(11,7)or(7,11)", NO),  # one pair alone is not the solution set
    (r"$\boxed{(7,11)}$", "(11,7)or(7,11)", NO),  # nor the other one (alone it even reads as an interval)
    (r"$\boxed{(7,11),\ (11,8)}$", "(11,7)or(7,11)", NO),  # one pair wrong
    (r"$(5,2),(7,2)$", "p=5,q=2;p=7,q=2", OK),  # pairs against assignments grouped by ';'
    (r"$(5,2),(2,7)$", "p=5,q=2;p=7,q=2", NO),  # a pair with its values swapped
    (r"$(5,2)$", "p=5,q=2;p=7,q=2", NO),  # one solution of two
    (r"$$\boxed{(x, y) = (5, 8) \quad \text{and} \quad (8, 5)}$$", "(5, 8), (8, 5)", OK),  # named pairs joined by 'and'
    (r"$$\boxed{(x, y) = (5, 8)}$$", "(5, 8), (8, 5)", NO),  # one named pair
    (r"\boxed{(2, 2)} \quad \text{and} \quad \boxed{(6, 2)}", "(2, 2), (6, 2)", OK),  # two boxes form the set
    (r"\boxed{(2, 2)}", "(2, 2), (6, 2)", NO),  # one box of two
    (r"\boxed{(2, 2)} \quad \text{and} \quad \boxed{(2, 6)}", "(2, 2), (6, 2)", NO),  # second pair reversed
    (r"\boxed{1} and \boxed{2} and \boxed{3}", r"\{1,2,3\}", OK),  # three boxes against a set
    (r"\boxed{1} and \boxed{2}", r"\{1,2,3\}", NO),  # a root missing
    (r"$\boxed{(3,2)}$", "(p,q)=(3,2)", OK),  # a pair against a named pair
    (r"$\boxed{(2,3)}$", "(p,q)=(3,2)", NO),  # reversed pair
    (r"$\boxed{x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}}$", r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}", OK),  # \pm in a fraction in a list (gold was BAD_GOLD)
    (r"$\boxed{\frac{1}{2}, \frac{-1 + \sqrt{13}}{4}, \frac{-1 - \sqrt{13}}{4}}$", r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}", OK),  # the three roots written out
    (r"$\boxed{x = \frac{1}{2}, x = \frac{-1 + \sqrt{13}}{4}}$", r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}", NO),  # the minus root missing
    (r"$\boxed{\frac{-1 \pm \sqrt{13}}{4}}$", r"\frac{-1 \pm \sqrt{13}}{4}", OK),  # \pm inside a fraction on both sides
    (r"$\boxed{\frac{-1 + \sqrt{13}}{4}}$", r"\frac{-1 \pm \sqrt{13}}{4}", NO),  # only the plus root
    (r"$\boxed{\frac{1 \pm \sqrt{13}}{4}}$", r"\frac{-1 \pm \sqrt{13}}{4}", NO),  # sign of the first term
    # ---- times and ratios with a zero part (12:00 reads as 12/0: undefined values compare as written)
    ("$1:00$", "12:00", NO),  # was a false positive: both read as division by zero
    ("$12:00$", "12:00", OK),  # the same time
    ("$12:30$", "12:00", NO),  # a defined ratio against an undefined one
    ("$2:0$", "1:0", NO),  # two undefined ratios
    ("$7:32$", r"S_{MBCN}:S=7:32", OK),  # a ratio against a named ratio
    ("$7:31$", r"S_{MBCN}:S=7:32", NO),  # a different ratio
    # ---- set relations: a set answer always matches the relation gold (the reverse needs relation_as_set)
    (r"$x \in [-2,7]$", r"-2 \le x \le 7", OK),  # membership against the inequalities
    (r"$[-2,7]$", r"-2 \le x \le 7", OK),  # the interval alone
    (r"$x \in [-2,7)$", r"-2 \le x \le 7", NO),  # one end open
    (r"$y \in [-2,7]$", r"-2 \le x \le 7", NO),  # another variable (strict)
    (r"$-2 \le x \le 7$", r"x \in [-2,7]", NO),  # relation against a set gold: off by default, as in math-verify
    # ---- decimal comma, only where it cannot be a thousands separator and not inside LaTeX
    ("1,22", "1.22", OK),  # two digits after the comma
    ("1.22", "1,22", OK),  # decimal comma in the gold
    ("0.111", "0,111", OK),  # a leading 0 is never a thousands group
    ("111", "0,111", NO),  # ... so 0,111 is not 111 (was read as 111)
    ("1.234", "1,234", NO),  # three digits after the comma: thousands
    (r"$\boxed{1,22}$", "1.22", NO),  # in LaTeX a comma separates a list
    (r"$\boxed{1,22}$", "1,22", OK),  # ... unless it is written exactly as the gold
    ("The price is 2,74 €", "2.74", OK),  # in a sentence
    ("1000,99", "1000.99", OK),  # four digits before the comma
    ("1000,99", "100099", NO),  # not a thousands separator
    # ---- unit stripping never cuts into a group
    (r"$1 - \frac{1}{\mathrm{e}}$", r"1 - \frac{1}{\mathrm{e}}", OK),  # e in \mathrm
    (r"$1 + \frac{1}{\mathrm{e}}$", r"1 - \frac{1}{\mathrm{e}}", NO),  # anchor strips \mathrm{e} as a unit: both read as 1
    (r"$1$", r"1 - \frac{1}{\mathrm{e}}", NO),  # the truncated reading
    # ---- precision: 6 decimal places by default (math-verify's float_rounding), rounding correct at the digits written
    ("0.000001", r"\frac{1}{2^{20}}", OK),  # 9.54e-7 to 6 places
    ("0.000002", r"\frac{1}{2^{20}}", NO),  # wrong in the 6th place
    ("0.000000", r"\frac{1}{10^{7}}", NO),  # no significant digit: matches only 0
    # ---- "Answer:" in other languages (simple-evals' multilingual prefixes, and Russian)
    ("Réponse : 42", "42", OK),  # French, space before the colon
    ("Réponse : 41", "42", NO),  # French, wrong value
    ("Ответ: 12. Проверка: 7 + 5 = 12, затем 3", "12", OK),  # Russian: the stated answer, not the last number
    ("Antwort: 12. Probe: 7 + 5 = 12, dann 3", "12", OK),  # German, same shape
    (r"答案：$\frac{1}{2}$", "0.5", OK),  # Chinese with a full-width colon, LaTeX answer
    ("最终答案：41", "42", NO),  # Chinese "final answer", wrong value
    # ---- answers without delimiters: the bare answer string is the answer (it never reads as empty)
    (r"\frac{\sqrt{3}}{2}", r"$\frac{\sqrt 3}{2}$", OK),  # bare LaTeX (was no_answer)
    (r"\frac{\sqrt{3}}{3}", r"$\frac{\sqrt 3}{2}$", NO),  # bare LaTeX, other value
    (r"3\sqrt{2}", r"$\sqrt{18}$", OK),  # bare radical (was read as 3)
    (r"2\sqrt{3}", r"$\sqrt{18}$", NO),  # first number differs
    (r"\frac{6}{\sqrt 2}", r"\sqrt{18}", OK),  # unrationalised denominator
    (r"\frac{6}{\sqrt 3}", r"\sqrt{18}", NO),  # same shape, other radicand
    (r"f(x) = \frac{2}{x}", r"$f(x)=\frac{2}{x}$", OK),  # bare function definition (was no_answer)
    (r"f(x) = \frac{x}{2}", r"$f(x)=\frac{2}{x}$", NO),  # numerator and denominator swapped
    (r"(2, 5), (4, 1)", r"$(4,1),(2,5)$", OK),  # bare set of pairs, other order (was read as 1)
    (r"(2, 5), (1, 4)", r"$(4,1),(2,5)$", NO),  # one pair reversed
    ("m", "$M=m$", OK),  # a single symbol as the answer (was no_answer)
    ("M", "$M=m$", NO),  # the name the gold assigns to, not its value
    (r"\boxed{M}", "$M=m$", NO),  # same in a box (the parser folds M to m: was correct)
    ("x", "x = 2", NO),  # a bare variable is not a value
    # ---- functions and equations up to renaming of the bound variable
    ("f(t) = t^2 + 1", "$f(x)=x^2+1$", OK),  # bare, renamed
    ("$f(t) = t^2 + 1$", "$f(x)=x^2+1$", OK),  # in math mode, renamed
    (r"\boxed{f(u) = u^2 + 1}", "f(x)=x^2+1", OK),  # boxed, renamed
    ("f(x) = x^2", "$f(x)=x^2+1$", NO),  # a term missing
    ("f(t) = x^2 + 1", "$f(x)=x^2+1$", NO),  # constant in t: not a renaming
    ("g(t) = t^2 + 1", "$f(x)=x^2+1$", NO),  # another function's name
    ("f(t) = t + 1, f(t) = -1", "$f(x)=-1$, $f(x)=x+1$", OK),  # both solutions, renamed
    ("f(t) = t + 1", "$f(x)=-1$, $f(x)=x+1$", NO),  # one solution of two
    # ---- inequalities, intervals and set-builder notation for one set
    ("x > 7", r"$(7,\infty)$", OK),  # bare inequality against an interval
    ("$x > 7$", r"$(7,\infty)$", OK),  # in math mode
    ("x ≥ 7", r"$[7,\infty)$", OK),  # typed symbol
    (r"\{x \mid x > 7\}", r"(7,\infty)", OK),  # set-builder against an interval
    (r"x \ge 7", r"(7,\infty)", NO),  # closed end
    ("x < 7", r"(7,\infty)", NO),  # other side
    (r"(7,\infty)", r"\{x \mid x > 7\}", OK),  # interval against a set-builder gold
    (r"[7,\infty)", r"\{x \mid x > 7\}", NO),  # closed end against a set-builder gold
    (r"x < 2 \text{ or } x > 3", r"(-\infty, 2) \cup (3, \infty)", OK),  # "or": the union
    (r"x < 2 \text{ or } x \ge 3", r"(-\infty, 2) \cup (3, \infty)", NO),  # one end closed
    (r"x < 2 \text{ and } x > 3", r"(-\infty, 2) \cup (3, \infty)", NO),  # "and": the intersection (empty)
    ("2 < x < 4", "(2,4)", NO),  # (2, 4) may be a point: an inequality is not accepted for it
    ("all real numbers", r"(-\infty,\infty)", OK),  # words for the set
    (r"\mathbb{R}", "all real numbers", OK),  # words in the gold
    ("all real numbers", r"(0,\infty)", NO),  # a bigger set is not the answer
    ("x > 0", "all real numbers", NO),  # a smaller one neither
    (r"(-\infty, \infty)", "x > 7", NO),  # an interval that contains the answer
    (r"[0, 10]", "3", NO),  # an interval around a number
    (r"\infty", "2", NO),  # infinity is no number
    # ---- solution sets: equations joined by "or", memberships, lists (the whole set, never a part)
    ("x = 2 or x = -3", "$-3, 2$", OK),  # equations joined by "or" (was read as -3)
    (r"x \in \{2, -3\}", "$-3, 2$", OK),  # membership
    ("-3, 2", r"x = 2 \text{ or } x = -3", OK),  # the list against equations
    ("x = 2 or x = 3", "$-3, 2$", NO),  # a sign lost
    ("x = 2", "$-3, 2$", NO),  # an element missing
    ("x = 2 or x = -3 or x = 5", "$-3, 2$", NO),  # an extra element
    ("2 or 3", "3", NO),  # a hedge between two values
    ("I think it is 2 or 3.", "3", NO),  # the same hedge in a sentence (was read as 3)
    ("It is 2, or possibly 3", "3", NO),  # a hedge with a filler word
    ("2 and/or 3", "3", NO),  # and/or
    ("3 (or four)", "3", NO),  # a second value in parentheses, in words
    (r"\boxed{3 \text{ (or 4)}}", "3", NO),  # ... inside the box
    ("The answer is $3$ (or maybe $4$).", "3", NO),  # ... between formulas
    ("The roots are $1$ and $2$.", r"\{1,2\}", OK),  # values joined in words between formulas: the set
    ("The answer is 2 or 3.", "3", NO),  # ... after "The answer is"
    (r"\boxed{2 \text{ or } 3}", "3", NO),  # ... in a box
    (r"\emptyset", "$-3, 2$", NO),  # the empty set
    ("no solution", r"\emptyset", OK),  # words for the empty set
    (r"\varnothing", "No solution", OK),  # the other empty-set sign against words
    ("no solution", "2", NO),  # claiming there is none
    ("36, 108", "36, 36, 108", NO),  # a value the gold lists twice (a set would drop it)
    ("36, 36, 108", "36, 36, 108", OK),  # all three
    # ---- assignments against a tuple (by name when the gold names the variables)
    ("a=1, b=2", "$(a,b)=(1,2)$", OK),  # assignments against the named tuple (was incorrect)
    ("b=2, a=1", "$(a,b)=(1,2)$", OK),  # by name, any order
    ("a=2, b=1", "$(a,b)=(1,2)$", NO),  # values swapped
    ("a=1, c=2", "$(a,b)=(1,2)$", NO),  # another name
    ("x = 6, y = 5", "(6,5)", OK),  # an unnamed gold: by position
    ("x = 5, y = 6", "(6,5)", NO),  # by position, swapped
    ("(3, -1)", "a = 3, b = -1", OK),  # a tuple against assignments written in order
    ("(-1, 3)", "a = 3, b = -1", NO),  # reversed (was correct: compared as sets of values)
    ("$(x, y) = (3, 4)$", "x = 3, y = 4", OK),  # a named tuple against the assignments
    ("$(x, y) = (4, 3)$", "x = 3, y = 4", NO),  # named, values swapped (was correct)
    # ---- quantities with units or words: element by element, never by the first number
    ("12 apples, 25 pears, 15 plums", r"12 \text{ apples}, 25 \text{ pears}, 15 \text{ plums}", OK),  # plain words against \text units (was "numbers differ")
    ("25 pears, 12 apples, 15 plums", r"12 \text{ apples}, 25 \text{ pears}, 15 \text{ plums}", OK),  # paired by unit
    ("12 apples, 26 pears, 15 plums", r"12 \text{ apples}, 25 \text{ pears}, 15 \text{ plums}", NO),  # the second count wrong (math-verify: correct)
    ("12 pears, 25 apples, 15 plums", r"12 \text{ apples}, 25 \text{ pears}, 15 \text{ plums}", NO),  # counts on the wrong items
    ("12 apples, 25 pears", r"12 \text{ apples}, 25 \text{ pears}, 15 \text{ plums}", NO),  # an item missing
    (r"$12 \text{ apples}, 30 \text{ pears}$", r"12 \text{ apples}, 25 \text{ pears}", NO),  # only the first count matches
    ("12, 25, 15", r"12 \text{ apples}, 25 \text{ pears}, 15 \text{ plums}", OK),  # the counts alone, in order
    ("12", r"12 \text{ apples}, 25 \text{ pears}, 15 \text{ plums}", NO),  # the first count alone
    ("12 apples, 25 apples", r"12 \text{ apples}, 25 \text{ pears}", NO),  # the right counts on the wrong units
    ("30 miles per hour, 40 miles per hour", r"30 \mathrm{mph}, 40 \mathrm{mph}", OK),  # units named another way: in order
    # ---- degrees and radians, where the gold writes ^\circ or \pi
    (r"\pi/3", r"$60^\circ$", OK),  # radians for a gold in degrees (was no_answer)
    (r"\pi/6", r"$60^\circ$", NO),  # another angle
    (r"60^\circ", r"\frac{\pi}{3}", OK),  # degrees for a gold in radians
    ("60 degrees", r"\frac{\pi}{3}", OK),  # the word
    (r"30^\circ", r"\frac{\pi}{3}", NO),  # another angle
    ("60", r"\frac{\pi}{3}", NO),  # a bare number is not an angle in degrees
    (r"\pi/3", "60", NO),  # the gold has no degree sign: nothing converts
    # ---- answers in words
    ("All even n", "$n$ is even", OK),  # the same description (was no_answer)
    ("n is even", "All even integers $n$", OK),  # the other way round
    ("All odd n", "$n$ is even", NO),  # the other parity
    ("n is even or odd", "$n$ is even", NO),  # a description that names the gold as one option
    ("n", "$n$ is even", NO),  # the gold's variable alone
    ("even", "$n$ is even", NO),  # a word of it alone
    ("all positive negative n", "all negative $n$", NO),  # an extra qualifier is not ignored
    ("infinitely many solutions", "Infinite number of solutions", OK),  # same words, other forms
    ("no solutions", "Infinite number of solutions", NO),  # the opposite
    # ---- other forms
    ("4.5e33", r"4.5 \times 10^{33}", OK),  # e-notation
    (r"4.5 \times 10^{32}", "4.5e33", NO),  # e-notation gold, other power
    ("x = 855,00", "855", OK),  # a decimal comma in a bare assignment
    ("x=1 or x=-2", "-2,1", OK),  # a plain gold '-2,1' is also the list -2, 1
    ("x=1 or x=2", "-2,1", NO),  # ... with the sign right
    ("-2.1", "-2,1", OK),  # ... and still the decimal -2.1
    ("twelve", "12", OK),  # a number in words (was no_answer)
    ("eleven", "12", NO),  # another number in words
    ("a", "1", NO),  # a variable, not "a" as in "a hundred"
    ("infinity", r"\infty", OK),  # the word
    ("-infinity", r"\infty", NO),  # the other end
    ("x = 3 (double root)", "3", OK),  # a remark in parentheses after the value
    ("x = 2 (double root)", "3", NO),  # ... with another value
    ("2 sqrt(2)", r"2\sqrt{2}", OK),  # a function written as plain text
    ("2 sqrt(3)", r"2\sqrt{2}", NO),  # ... another radicand
    ("1 1/2", r"\frac{3}{2}", OK),  # a mixed number in plain text
    ("1 1/3", r"\frac{3}{2}", NO),  # ... another one
    (r"\begin{cases} x = 2 \\ y = 3 \end{cases}", "x=2, y=3", OK),  # a system's solution as cases
    (r"\begin{cases} x = 3 \\ y = 2 \end{cases}", "x=2, y=3", NO),  # ... swapped
    ("(1, 2)", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", OK),  # a column vector written as a tuple
    ("(2, 1)", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", NO),  # ... reversed
    ("(1, 2, 3)", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", NO),  # ... another length
    # ---- bad gold
    ("5", "", BG),  # empty gold
    ("5", "???", BG),  # gold without any math
    ("5", "  ", BG),  # whitespace gold
    ("5", r"\frac{", BG),  # malformed latex gold
    ("5", "x" * 20_000, BG),  # gold longer than the limit
    # ---- hostile input
    ("The answer is 4\x002.", "42", NO),  # a NUL byte becomes a space: '4 2' never glues into 42
    ("The answer is 42.\x00", "42", OK),  # a trailing NUL byte is harmless
    ("\ud800 The answer is 7.", "7", OK),  # a lone surrogate does not break anything
    ("The answer is 7.\ud800", "7", OK),  # a lone surrogate at the end
    ("filler " * 200_000 + "The answer is 7.", "7", OK),  # 1.4 MB prediction: the tail is read
    ("The answer is 7." + " filler" * 200_000, "7", NA),  # answer beyond the 8 KiB tail is not read
    (r"\boxed{" * 50 + "7" + "}" * 50, "7", OK),  # deeply nested boxes
    (r"\boxed{7", "7", NA),  # unclosed box: nothing is extractable (no delimiter before the 7)
    ("The answer is 9" * 3, "9", OK),  # repeated statement
]

EXTRA = [  # (prediction, gold, expected, options): cases that need options
    ("0.333", r"\frac{1}{3}", OK, {"rel_tol": 1e-2}),  # loose tolerance accepts 3 digits
    ("0.3", r"\frac{1}{3}", NO, {"rel_tol": 1e-2}),  # but not 1 digit
    (r"$y+1$", "x+1", OK, {"strict": False}),  # non-strict: variables matched by position
    (r"$y+1$", "x+1", NO, {"strict": True}),  # strict: different variable
    ("0.33", r"\frac{1}{3}", OK, {"precision": 2}),  # the task asks for 2 decimals
    ("0.333", r"\frac{1}{3}", OK, {"precision": 2}),  # more decimals, rounded correctly
    ("0.34", r"\frac{1}{3}", NO, {"precision": 2}),  # wrongly rounded
    ("0.334", r"\frac{1}{3}", NO, {"precision": 2}),  # wrong at the digits written (math-verify: equal)
    ("0.3", r"\frac{1}{3}", NO, {"precision": 2}),  # fewer decimals than asked
    (r"$(0.6,2.6667]$", r"(\frac{3}{5},\frac{8}{3}]", OK, {"precision": 2}),  # interval ends to 2+ places
    (r"$(0.6,2.6651]$", r"(\frac{3}{5},\frac{8}{3}]", NO, {"precision": 2}),  # an end wrong at its 4th place
    (r"$(0.6,2.6667]$", r"(\frac{3}{5},\frac{8}{3}]", NO, {"sig_digits": 0}),  # rounding policy off: 4 places are not 8/3
    (r"$(0.6,2.6667]$", r"(\frac{3}{5},\frac{8}{3}]", OK, {}),  # rounding policy: 5 significant digits, correctly rounded
    ("3.14", r"\pi", NO, {"sig_digits": 0}),  # rounding policy off
    ("3.14", r"\pi", NO, {"sig_digits": 4}),  # a stricter floor
    (r"$\begin{pmatrix}0.33\\0.2\end{pmatrix}$", r"\begin{pmatrix}\frac{1}{3}\\\frac{1}{5}\end{pmatrix}", OK, {"precision": 2}),  # matrix entries
    (r"$\begin{pmatrix}0.33\\0.2\end{pmatrix}$", r"\begin{pmatrix}\frac{1}{3}\\\frac{1}{5}\end{pmatrix}", NO, {}),  # same, default precision
    ("0.0000002", "0.0000001", NO, {"precision": 2}),  # two decimals are never rounded to `precision`
    (r"$\sqrt{17}$", "4.12311", OK, {"precision": 5}),  # a decimal gold to 5 places
    (r"$4\sqrt{2}$", "4", NO, {"precision": 5}),  # an integer gold stays exact
    (r"$-2 \le x \le 7$", r"x \in [-2,7]", OK, {"relation_as_set": True}),  # relation against a set gold, allowed
    (r"$-2 < x \le 7$", r"x \in [-2,7]", NO, {"relation_as_set": True}),  # one end open
    (r"$-2 \le y \le 7$", r"x \in [-2,7]", NO, {"relation_as_set": True}),  # another variable
    ("Answer $ \n 9 \n $", "9", OK, {}),  # a broken inline formula: the plain-text reading finds 9
    ("Answer $ \n 9 \n $", "9", NA, {"latex_only": True}),  # LaTeX only: an inline formula cannot span lines
    ("The answer is 9", "9", NA, {"latex_only": True}),  # LaTeX only: plain text is not read
    (r"The answer is $9$", "9", OK, {"latex_only": True}),  # LaTeX only: inline math
    (r"\boxed{8}", "9", NO, {"latex_only": True}),  # LaTeX only: a wrong boxed answer
]


def _ids(cases):
    return [f"{i}:{c[0][:25]!r}~{c[1][:20]!r}" for i, c in enumerate(cases)]


@pytest.mark.parametrize("prediction, gold, expected", CASES, ids=_ids(CASES))
def test_math_table(prediction, gold, expected):
    res = verify_math(prediction, gold)
    assert res.verdict is expected, f"{res.verdict.value} ({res.detail}; read {res.extracted!r}, gold {res.gold_parsed!r})"
    assert res.kind == "math" and res.elapsed >= 0


@pytest.mark.parametrize("prediction, gold, expected, options", EXTRA, ids=_ids(EXTRA))
def test_math_options(prediction, gold, expected, options):
    assert verify_math(prediction, gold, **options).verdict is expected


def test_table_size_and_balance():
    negatives = sum(1 for c in CASES if c[2] is not OK)
    assert len(CASES) >= 200 and negatives >= 80, (len(CASES), negatives)


def test_result_fields():
    res = verify_math(r"so \boxed{\frac{2}{4}}", "0.5")
    assert res.correct and res.score == 1.0
    assert res.extracted == r"\frac{2}{4}" and res.gold_parsed == "0.5" and res.detail
    miss = verify_math("nothing", "0.5")
    assert miss.verdict is NA and miss.extracted is None and miss.score == 0.0


def test_unknown_option_names_valid_ones():
    with pytest.raises(TypeError, match="tolerance.*valid options: latex_only, precision, rel_tol, relation_as_set, sig_digits, strict"):
        verify_math("1", "1", tolerance=0.1)


HOSTILE = [  # odd inputs: a clean verdict, quickly (only the last 8 KiB of a prediction is read)
    "\x00" * 10,  # NUL bytes only
    "\ud800\udfff",  # lone surrogates
    "a" * 1_000_000,  # 1 MB of letters
    "7 " * 500_000,  # 1 MB of numbers
    "(" * 100_000,  # unbalanced parentheses
    "\\boxed{" * 100_000,  # unclosed boxes
    "{" * 50_000 + "}" * 50_000,  # deep braces
    "$" * 100_000,  # dollar signs
    "1/" * 300_000,  # a long fraction chain
]


@pytest.mark.parametrize("prediction", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
@pytest.mark.parametrize("gold", ["7", "x^2", "B"])
def test_hostile_predictions(prediction, gold):
    import time

    start = time.perf_counter()
    res = verify_math(prediction, gold)
    assert res.verdict in (OK, NO, NA)
    assert time.perf_counter() - start < 5.0  # ~0.8 s worst case measured; the margin is for a busy machine


@pytest.mark.parametrize("options, field", [
    ({"rel_tol": -0.1}, "rel_tol"),  # negative tolerance
    ({"rel_tol": "1e-6"}, "rel_tol"),  # a string, not a number
    ({"strict": "yes"}, "strict"),  # not a bool
    ({"precision": 2.5}, "precision"),  # decimal places are a whole number
    ({"precision": -1}, "precision"),  # and not negative
    ({"relation_as_set": "yes"}, "relation_as_set"),  # not a bool
    ({"latex_only": 1}, "latex_only"),  # not a bool
])
def test_bad_option_values_name_the_field(options, field):
    from verifiers.fastpath import fast_verify

    with pytest.raises(ValueError, match=field):
        verify_math("1", "1", **options)
    with pytest.raises(ValueError, match=field):
        fast_verify("1", "1", **options)  # the fast path checks options the same way
