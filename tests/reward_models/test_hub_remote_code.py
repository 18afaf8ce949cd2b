"""Hub loading: a checkpoint's own Python code never runs unless the spec says trust_remote_code
(docs/security.md, "Hub loading")."""

import json

import pytest


def test_a_checkpoints_own_code_never_runs_without_trust_remote_code(tmp_path):
    from reward_models.hub import load_hub_reward_model

    marker = tmp_path / "ran"
    config = {"architectures": ["EvilForSequenceClassification"], "model_type": "evil-rm",
              "auto_map": {"AutoConfig": "evil.EvilConfig", "AutoModelForSequenceClassification": "evil.EvilModel"}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('the checkpoint ran code')\n")
    with pytest.raises(ValueError, match="trust_remote_code"):
        load_hub_reward_model(str(tmp_path), config, "bt", "cpu", 4)
    assert not marker.exists()
