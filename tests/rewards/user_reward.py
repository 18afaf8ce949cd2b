"""A user's own reward, imported by spec as `tests.rewards.user_reward:brevity`."""


def brevity(prompts, completions, **columns):
    return [-float(len(c)) for c in completions]


def raises(prompts, completions, **columns):
    """A reward that fails on every call (the RL loop must stop, naming it)."""
    raise RuntimeError("this reward always fails")
