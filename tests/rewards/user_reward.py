"""A user's own reward, imported by spec as `tests.rewards.user_reward:brevity`."""


def brevity(prompts, completions, **columns):
    return [-float(len(c)) for c in completions]


def slow_length(prompts, completions, **columns):
    """A slow reward (0.2 s per call, whatever the batch size, like a batched RM or a remote judge):
    the completion's length. Itemwise, so a service may merge requests into one call."""
    import time

    time.sleep(0.2)
    return [float(len(c)) for c in completions]


slow_length.itemwise = True


def fails_on_boom(prompts, completions, **columns):
    """1.0 per item, but raises on a completion that says "boom" (a reward failing mid-dataset)."""
    if any("boom" in c for c in completions):
        raise ValueError("boom in the batch")
    return [1.0] * len(completions)


fails_on_boom.itemwise = True


def raises(prompts, completions, **columns):
    """A reward that fails on every call (the RL loop must stop, naming it)."""
    raise RuntimeError("this reward always fails")
