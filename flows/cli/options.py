"""Flags generated from :class:`prdigest.pipeline.compose.RunOptions`: one source of truth for ``digest run``/``demo``.

Each field of ``RunOptions`` becomes ``--field-name`` with the field's description as its help, so a new
run option reaches the command line (and ``--help``) by being declared once. Every flag reaches the
command as text (or a bare switch for a ``bool``) and ``RunOptions`` validates it: a bad value is one line
naming the flag, the same check the Prefect flow's parameters get.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any, Optional

import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from flows.cli.terminal import fail
from prdigest.kernel.errors import first_problem
from prdigest.kernel.location import state_help
from prdigest.kernel.options import RunOptions

#: Not a run option: how much of Prefect's logging reaches the terminal.
VERBOSE = inspect.Parameter("verbose", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                            default=typer.Option(False, "--verbose", "-v", help="Show Prefect's logs too."))


def state_option(kept: str = "", default: str = "") -> Any:
    """The ``--state`` option of a command that is not built from RunOptions (status, resend, site, eval, web,
    rules, readers, impact); its help is :func:`prdigest.kernel.location.state_help`'s, as run's is."""
    return typer.Option(None, "--state", help=state_help(kept, default))


def flag(name: str) -> str:
    """``--the-flag`` of a field."""
    return "--" + name.replace("_", "-")


def _parameter(name: str, info: FieldInfo, required: bool) -> inspect.Parameter:
    help_text = info.description or ""
    if info.annotation is bool:
        option = typer.Option(bool(info.default), flag(name), help=help_text)
        annotation: Any = bool
    else:
        # Unset (None) leaves the field to RunOptions' default or the environment (settings); a fixed default
        # is shown in --help as it is today.
        default = ... if required else (info.default if isinstance(info.default, (str, int, float)) else None)
        option = typer.Option(default, flag(name), help=help_text, show_default=default not in (None, ...))
        annotation = str if required else Optional[str]
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=option)


def option_parameters(model: type[BaseModel] = RunOptions, *, only: Iterable[str] | None = None,
                      required: Iterable[str] = ()) -> list[inspect.Parameter]:
    """A command parameter per field of ``model`` (in declaration order), or of the fields named in ``only``."""
    fields = model.model_fields
    names = list(fields) if only is None else list(only)
    unknown = [n for n in names if n not in fields]
    if unknown:
        raise ValueError(f"{model.__name__} has no field {', '.join(unknown)}")
    must = set(required)
    return [_parameter(name, fields[name], name in must) for name in names]


def to_options(values: dict[str, Any], kind: type[BaseModel] = RunOptions, **fixed: Any) -> Any:
    """The options (``kind``, RunOptions) from the flags given (None: unset) and ``fixed`` values; a bad one exits with
    one line naming its flag."""
    given = {**{k: v for k, v in values.items() if v is not None}, **fixed}
    try:
        return kind(**given)
    except ValidationError as exc:
        problem = first_problem(exc)
        name = flag(problem.top) if problem.loc else "options"
        message = problem.message.removeprefix("Value error, ")
        raise fail(message if message.startswith(name) else f"{name}: {message}") from None


def options_command(body: Callable[[Any, bool], None], *, doc: str, only: Iterable[str] | None = None,
                    required: Iterable[str] = (), fixed: dict[str, Any] | None = None,
                    model: type[BaseModel] = RunOptions) -> Callable[..., None]:
    """A Typer command whose flags are the fields of ``model`` (RunOptions) plus ``--verbose``; it calls
    ``body(options, verbose)``. ``fixed`` values are not flags (``digest demo`` always reads the shipped week)."""
    parameters = [*option_parameters(model, only=only, required=required), VERBOSE]

    def command(**values: Any) -> None:
        verbose = bool(values.pop("verbose", False))
        body(to_options(values, model, **(fixed or {})), verbose)

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]  # Typer reads it
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__doc__ = doc
    return command
