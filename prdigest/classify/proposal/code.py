"""The ``code:`` section a proposal suggests from the tree: where code facts (prdigest/collect/facts/) find the
configuration surface. Read from paths only, by the names projects give these files: ``envs.py`` (environment
variables), ``arg_utils.py`` / ``cli_args.py`` (command-line arguments), a package's ``config/`` folder or
``config.py`` (config classes); the packages are the top-level folders with an ``__init__.py``."""

from __future__ import annotations

import re

from prdigest.classify.rulesfile import CodeRules

_NOT_CODE = re.compile(r"(^|/)(tests?|testing|docs?|examples?|benchmarks?|scripts?|tools?)/")
_ENV = re.compile(r"^[A-Za-z_][\w/]*/envs?\.py$")
_ARGS = re.compile(r"^[A-Za-z_][\w/]*/(arg_utils|cli_args|argparse_utils)\.py$")
_CONFIG_DIR = re.compile(r"^([A-Za-z_]\w*)/config/[\w/]+\.py$")
_CONFIG_FILE = re.compile(r"^[A-Za-z_]\w*/config\.py$")
_PACKAGE = re.compile(r"^([A-Za-z_]\w*)/__init__\.py$")


def _anchored(path: str) -> str:
    return "^" + re.escape(path) + "$"


def propose_code(tree: list[str]) -> CodeRules | None:
    """The section for a tree, or None when it shows none of these files."""
    code = [p for p in tree if not _NOT_CODE.search(p)]
    packages = sorted({m[1] for p in code if (m := _PACKAGE.match(p))})
    env = sorted(_anchored(p) for p in code if _ENV.match(p))
    args = sorted(_anchored(p) for p in code if _ARGS.match(p))
    config = sorted({f"^{re.escape(m[1])}/config/" for p in code if (m := _CONFIG_DIR.match(p))}
                    | {_anchored(p) for p in code if _CONFIG_FILE.match(p)})
    if not (env or args or config):
        return None
    return CodeRules(packages=tuple(packages), env_files=tuple(env), argument_files=tuple(args),
                     config_files=tuple(config))
