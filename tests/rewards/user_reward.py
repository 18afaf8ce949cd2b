"""A user's own reward, imported by spec as `tests.rewards.user_reward:brevity`."""


def brevity(prompts, completions, **columns):
    return [-float(len(c)) for c in completions]
