"""Multi-turn episodes: the environment's tokens are in the sequence but out of the loss (checked
against a loss computed by hand), turns end at the environment's stop strings, the gold accuracy
reads the final answer only, and `rl --env` runs end to end."""

import json
from types import SimpleNamespace

import pytest
import torch

from rewards.environments import Turn, build_env
from training.collect import Batch
from training.config import RLConfig
from training.episodes import Episode, episode_scores, final_answers, sample_episodes
from training.policy import save_policy_atomically, tiny_policy, widen_vocabulary
from training.reward_calls import Scores
from training.rollout import Rollout, token_logprobs
from training.tokenizer import TOOL_CHARS
from training.update import compute_advantages, update_policy


def tool_policy(seed=0):
    model, tok = tiny_policy(seed=seed)
    torch.manual_seed(seed)
    return widen_vocabulary(model, tok, TOOL_CHARS)


def two_turn_rollout(tok):
    """Two episodes of the prompt `1+2=`: a tool call, its result (the environment's), an answer."""
    ids = lambda s: tok(s, add_special_tokens=False)["input_ids"]  # noqa: E731
    eos, pad = tok.eos_token_id, tok.pad_token_id
    episodes = [("<calc>1+2</calc>", "<result>3</result>", "3"), ("<calc>1+2</calc>", "<result>3</result>", "4")]
    rows, act = [], []
    for call, obs, answer in episodes:
        rows.append(ids(call) + ids(obs) + ids(answer) + [eos])
        act.append([1] * len(ids(call)) + [0] * len(ids(obs)) + [1] * (len(ids(answer)) + 1))
    width = max(map(len, rows))
    completion = torch.tensor([r + [pad] * (width - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
    action = torch.tensor([a + [0] * (width - len(a)) for a in act])
    prompt = torch.tensor([ids("1+2=")] * 2)
    return Rollout(prompt, torch.ones_like(prompt), completion, mask, torch.zeros(2, dtype=torch.bool),
                   [tok.decode(r, skip_special_tokens=True) for r in rows], action, [Episode(), Episode()])


def test_environment_tokens_are_out_of_the_loss_by_hand():
    model, tok = tool_policy()
    rollout = two_turn_rollout(tok)
    config = RLConfig(group_size=2, prompts_per_step=1, max_grad_norm=1e9, lr=1.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)  # one plain step: the weights move by -gradient
    from accelerate import Accelerator

    from training.run_state import Counters

    run = SimpleNamespace(config=config, accelerator=Accelerator(cpu=True), model=model, tokenizer=tok, value_head=None,
                          ref_model=None, optimizer=optimizer, params=list(model.parameters()), vllm=None,
                          scheduler=torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0),
                          counters=Counters())
    batch = Batch(rows=[{}], prompts=["1+2="] * 2, rollout=rollout,
                  scores=Scores(totals=[1.0, 0.0], applicable=[True, True]), gold=None, metrics={}, drawn=1,
                  zero_variance_groups=0, seconds={})
    adv = compute_advantages(run, batch)
    assert torch.equal(adv.loss_mask, rollout.action_mask)  # the result tokens are not the policy's
    before = [p.detach().clone() for p in model.parameters()]
    update_policy(run, batch, adv)
    moved = [b - p.detach() for b, p in zip(before, model.parameters())]  # = the gradient

    # by hand: GRPO advantages +-1/sqrt(2) (rewards 1 and 0, std 1/sqrt(2)); the loss with ratio 1 is
    # -(1/n) sum over the policy's tokens of A_i log pi(token), n = the number of policy tokens
    def hand_gradient(mask):
        reference, _ = tool_policy()
        logp, _ = token_logprobs(reference, rollout.input_ids, rollout.attention_mask, rollout.completion_ids.shape[1], 1.0)
        a = torch.tensor([[1.0], [-1.0]]) / 2 ** 0.5
        loss = -(a * logp * mask).sum() / mask.sum()
        return torch.autograd.grad(loss, list(reference.parameters()), allow_unused=True)

    expected = hand_gradient(rollout.action_mask.float())
    for got, want in zip(moved, expected):
        assert torch.allclose(got, want if want is not None else torch.zeros_like(got), atol=1e-6)
    with_environment = hand_gradient(rollout.completion_mask.float())  # had the result tokens been trained on
    assert any(not torch.allclose(g, w, atol=1e-6) for g, w in zip(moved, with_environment) if w is not None)


class Scripted:
    """An environment whose turns end at any digit, answering `(0)` with a per-turn reward of 0.25."""

    stop = tuple("0123456789")

    def __init__(self):
        self.turns = 0

    def reset(self, row):
        return None

    def step(self, message):
        self.turns += 1
        return Turn(observation="(0)", reward=0.25, done=message.endswith("="))

    def reward(self):
        return 1.0


def test_episodes_take_turns_mask_observations_and_respect_the_turn_limit():
    model, tok = tool_policy(seed=3)
    rows = [{"prompt": "1+2=", "answer": "3"}]
    torch.manual_seed(0)
    r = sample_episodes(model, tok, ["1+2="], rows, Scripted, num_samples=6, max_turns=3, max_new_tokens=5, temperature=1.0)
    assert len(r.episodes) == 6 and r.action_mask.shape == r.completion_ids.shape
    for i, ep in enumerate(r.episodes):
        n = int(r.completion_mask[i].sum())
        tokens = r.completion_ids[i, :n].tolist()
        policy_text = tok.decode([t for t, a in zip(tokens, r.action_mask[i].tolist()) if a])
        env_text = tok.decode([t for t, a in zip(tokens, r.action_mask[i].tolist()) if not a])
        assert 1 <= ep.turns <= 3 and env_text == "(0)" * env_text.count("(0)")
        assert env_text.count("(0)") <= ep.turns - 1  # no observation after the last turn
        assert r.action_mask[i, n - 1] == 1  # an episode ends on the policy's token
        assert "(0)" not in policy_text
        assert ep.total == pytest.approx(1.0 + 0.25 * ep.turns)
    assert max(e.turns for e in r.episodes) == 3  # some went on to the limit
    scores = episode_scores(r.episodes)
    assert scores.step_rewards is not None and all(len(s) == e.turns for s, e in zip(scores.step_rewards, r.episodes))


def test_the_gold_reads_the_final_answer_never_the_tool_result():
    env = build_env("calculator")()
    env.reset({"prompt": "734+289=", "answer": "1023"})
    assert env.step("<calc>734+289</calc>").observation == "<result>1023</result>"
    ep = Episode(turns=1, tool_calls=1, answered=False, final_message="<calc>734+289</calc>")
    assert final_answers([ep]) == [""]  # cut by the turn limit after the result: no answer, whatever the transcript holds
    assert env.reward() == 0.0  # and the environment never saw a final answer


def test_rl_with_the_calculator_environment_end_to_end(tmp_path):
    from training.run_state import prepare_run
    from training.trainer import train

    model, tok = tool_policy()
    save_policy_atomically(model, tok, tmp_path / "policy")
    config = RLConfig(model=str(tmp_path / "policy"), env="calculator:cost=0.01", max_turns=2, max_new_tokens=8, steps=2,
                      prompts_per_step=4, group_size=2, eval_size=8, probe_size=0, report=False, output_dir=tmp_path / "run")
    assert config.reward == "env"
    summary = train(config, prepare_run(config))
    records = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert len(records) == 2 and {"episodes/turns_mean", "episodes/tool_use_rate", "length/policy_mean"} <= set(records[0])
    assert summary["accuracy_after"] is not None and "tool_use_after" in summary
    resumed = RLConfig(**{**config.__dict__, "steps": 3, "resume": True, "overwrite": False})
    train(resumed, prepare_run(resumed))  # --resume continues an --env run from its checkpoint
    records = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3]


def test_env_with_overlap_trains(tmp_path):
    from training.run_state import prepare_run
    from training.trainer import train

    model, tok = tool_policy()
    save_policy_atomically(model, tok, tmp_path / "policy")
    config = RLConfig(model=str(tmp_path / "policy"), env="calculator", max_turns=2, max_new_tokens=8, steps=3, overlap=True,
                      prompts_per_step=4, group_size=2, eval_size=4, probe_size=0, report=False, output_dir=tmp_path / "run")
    train(config, prepare_run(config))
    records = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all("episodes/turns_mean" in r for r in records)


def test_env_options_are_checked_before_any_model_loads(tmp_path):
    with pytest.raises(ValueError, match="leave --reward unset or pass --reward env"):
        RLConfig(env="calculator", reward="verifier:math")
    with pytest.raises(ValueError, match="pass --env SPEC"):
        RLConfig(reward="env")
    from training.run_state import prepare_run

    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"prompt": "1+1=", "gold": "2"}) + "\n")
    with pytest.raises(ValueError, match="no 'answer' column"):
        prepare_run(RLConfig(env="calculator", data=str(data), accuracy_reward="none", output_dir=tmp_path / "r"))
    with pytest.raises(ValueError, match=r"default policy cannot write \['</calc>'\].*--add-chars tools"):
        prepare_run(RLConfig(env="calculator", output_dir=tmp_path / "r2"))


def test_code_environment_episodes_get_a_second_try_with_the_feedback_masked():
    model, tok = tool_policy(seed=1)
    rows = [{"prompt": "1+2=", "answer": "assert add(1, 2) == 3"}]
    torch.manual_seed(0)
    r = sample_episodes(model, tok, ["1+2="], rows, build_env("code:max_attempts=2"), num_samples=3, max_turns=3,
                        max_new_tokens=6, temperature=1.0)
    for i, ep in enumerate(r.episodes):  # an untrained policy writes no program: feedback, a second try, then done
        assert ep.turns == 2 and ep.answered and ep.total == 0.0
        n = int(r.completion_mask[i].sum())
        env_text = tok.decode([t for t, a in zip(r.completion_ids[i, :n].tolist(), r.action_mask[i].tolist()) if not a])
        assert env_text.startswith("<feedback>") and env_text.endswith("</feedback>")


class MeetingEnv:
    """Each step waits at a barrier for one other step: stepped one after another, it breaks."""

    concurrent = True
    stop = ()
    barrier = None

    def reset(self, row):
        return None

    def step(self, message):
        import threading

        MeetingEnv.barrier.wait()
        return Turn(observation=f"{message}@{threading.get_ident()}", done=False)

    def reward(self):
        return 0.0


def test_steps_of_concurrent_environments_run_at_once_and_keep_their_order():
    import threading

    from training.episodes import _step_all

    envs, messages = [MeetingEnv() for _ in range(8)], [str(i) for i in range(8)]
    MeetingEnv.barrier = threading.Barrier(2, timeout=10)  # two steps must be in flight together
    turns = _step_all(envs, messages)
    assert [t.observation.split("@")[0] for t in turns] == messages  # each answer is its own episode's
    MeetingEnv.concurrent, MeetingEnv.barrier = False, threading.Barrier(1)  # one that does not say so: in this thread
    try:
        turns = _step_all(envs[:2], messages[:2])
        assert {t.observation.split("@")[1] for t in turns} == {str(threading.get_ident())}
    finally:
        MeetingEnv.concurrent = True


def test_rl_with_the_code_environment_on_the_function_task(tmp_path):
    """`--env code --data functions`: accuracy is the code verifier's on the final program, and the
    summary says how often one try was enough."""
    from training.run_state import prepare_run
    from training.trainer import train

    model, tok = tool_policy()
    save_policy_atomically(model, tok, tmp_path / "policy")
    config = RLConfig(model=str(tmp_path / "policy"), env="code", data="functions", max_turns=2, max_new_tokens=8, steps=1,
                      prompts_per_step=2, group_size=2, eval_size=4, probe_size=0, report=False, output_dir=tmp_path / "run")
    assert (config.reward, config.accuracy_reward) == ("env", "verifier:code")
    summary = train(config, prepare_run(config))
    assert summary["accuracy_after"] == summary["first_turn_accuracy_after"] == 0.0  # an untrained policy writes no program
    assert summary["first_turn_accuracy_before"] == 0.0
    assert "tool_use_after" not in summary and summary["badly_wrong_after"] is None  # no tools; the asserts are not a number
    assert RLConfig(env="code:column=tests").accuracy_reward == "verifier:code:column=tests"
    assert RLConfig(env="calculator").accuracy_reward == "verifier:math"
