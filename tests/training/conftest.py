import pytest
import torch


@pytest.fixture(autouse=True)
def _tmp_cache(tmp_path_factory, monkeypatch):
    """Never touch the user's ~/.cache/rewardlab from tests."""
    monkeypatch.setenv("REWARDLAB_CACHE", str(tmp_path_factory.getbasetemp() / "rewardlab-cache"))


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    """A randomly initialised tiny policy saved to disk (no training)."""
    from training.policy import save_policy_atomically, tiny_policy

    path = tmp_path_factory.mktemp("tiny") / "policy"
    model, tok = tiny_policy(seed=0)
    save_policy_atomically(model, tok, path)
    return path


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny models: one thread is as fast, and never oversubscribes a shared CPU (the trainer's
    --cpu-threads default). Restored afterwards so other packages' tests keep torch's default."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
