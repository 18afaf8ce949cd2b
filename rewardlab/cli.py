"""`rewardlab <command> ...` — a thin dispatcher.

Each package owns its subcommands: a module with `configure(parser)` (adds arguments) and
`run(args) -> int` (does the work, returns an exit code). Only the chosen module is imported,
so `rewardlab verify` starts without importing torch.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# command name -> (module, one-line help). Add a command by adding a line here.
COMMANDS: dict[str, tuple[str, str]] = {
    "verify": ("verifiers.cli", "verify predictions against gold answers (one pair or a JSONL file)"),
    "serve-verifier": ("verifiers.service_cli", "serve the verifiers over HTTP"),
    "train-rm": ("reward_models.cli", "train a reward model (bt, quantile, prm)"),
    "serve-reward": ("rewards.service_cli", "serve a reward spec over HTTP (OpenRLHF remote-RM compatible)"),
    "serve-env": ("rewards.env_service_cli", "serve an environment over HTTP (NeMo Gym's resource-server shape: sessions, tools, /verify)"),
    "score-data": ("rewards.batch_cli", "verify / score a whole dataset with a reward spec (locally or on Ray), write it back with rewards and verdicts"),
    "sft": ("training.sft_cli", "supervised fine-tuning on prompt/answer data"),
    "rm-data": ("training.rm_data_cli", "reward-model data from a policy's own samples, labelled by a verifier"),
    "rl": ("training.cli", "RL (GRPO/PPO family) with the reward you choose"),
    "eval-rm": ("eval.rm_cli", "reward-model accuracy, calibration and OOD checks"),
    "audit-verifier": ("eval.audit_cli", "compare two verifiers (or one against labels)"),
    "eval-policy": ("eval.policy_cli", "pass@k, maj@k and mean reward of a policy"),
}


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: rewardlab <command> [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "Run `rewardlab <command> --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if argv[0] in ("-V", "--version"):
        from rewardlab import __version__

        print(f"rewardlab {__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"rewardlab: unknown command {name!r}.\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, help_ = COMMANDS[name]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"rewardlab {name}", description=help_)
    module.configure(parser)
    args = parser.parse_args(rest)
    return int(module.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
