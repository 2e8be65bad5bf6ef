"""``Pipeline``: an ordered list of named passes, built fluently or parsed from
MLIR pipeline syntax, printed back in that syntax, and run on a module.

    Pipeline().generalize_named_ops().convert_linalg_to_loops().canonicalize()
    Pipeline.parse("canonicalize,cse,scf-tile-and-interchange{tile-sizes=32,32 interchange=1,0}")

Passes are looked up in ``loom.passes.available_passes()`` (xDSL's and loom's).
Pipelines are immutable: each builder call returns a new one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, get_pass_option_infos
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, ParseError

from loom.errors import LoomError

DumpCallback = Callable[[str, ModuleOp], None]
"""Called as ``dump(pass_spec_string, module)`` after each pass."""


def _pass_text(p: ModulePass) -> str:
    spec = p.spec()
    dashed = {k.replace("_", "-"): v for k, v in spec.parameters.items()}
    return str(ArgSpec(spec.name, dashed))


def _options_help(cls: type[ModulePass]) -> str:
    infos = [i for i in get_pass_option_infos(cls) if i.name != "name"]
    if not infos:
        return "it takes no options"
    return "its options are " + ", ".join(
        f"{i.name.replace('_', '-')}: {i.expected_type.strip(chr(39))}" for i in infos
    )


def make_pass(name: str, parameters: dict[str, tuple[Any, ...]]) -> ModulePass:
    """Instantiate the pass ``name`` with options (values as tuples), or raise LoomError."""
    from loom.passes import ALIASES, available_passes

    passes = available_passes()
    name = ALIASES.get(name, name)
    if name not in passes:
        close = [n for n in sorted(passes) if name.split("-")[0] in n][:12]
        hint = f"; similar: {', '.join(close)}" if close else ""
        raise LoomError(
            f"unknown pass '{name}'{hint}; available passes: {', '.join(sorted(passes))}",
            where=f"pass {name}",
        )
    cls = passes[name]()
    try:
        return cls.from_spec(ArgSpec(name, dict(parameters)))
    except LoomError as e:
        message = e.message.removeprefix(f"{name}: ")
        raise LoomError(f"{message}; {_options_help(cls)}", where=f"pass {name}") from None
    except (ValueError, TypeError) as e:
        raise LoomError(f"bad options: {e}; {_options_help(cls)}", where=f"pass {name}") from None


_OPTION_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}


def option_string(value: str, *, what: str = "a pass option") -> str:
    """``value`` as a quoted pass-option string that ``Pipeline.parse`` reads back unchanged.

    Quotes, backslashes, newlines and tabs are escaped. The pipeline lexer has no spelling for a
    carriage return, form feed or vertical tab that the option decoder also accepts, so those are a
    LoomError (a file path or accelerator name holding one cannot be passed to a pass)."""
    for ch in ("\r", "\f", "\v"):
        if ch in value:
            raise LoomError(f"{what} {value!r} contains the control character {ch!r}, which a pass pipeline "
                            "option cannot carry; rename it", where="pass pipeline")
    return '"' + "".join(_OPTION_ESCAPES.get(c, c) for c in value) + '"'


def _as_parameters(options: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    for key, value in options.items():
        if value is None:
            continue
        out[key.replace("_", "-")] = tuple(value) if isinstance(value, list | tuple) else (value,)
    return out


class Pipeline:
    """An immutable sequence of pass instances."""

    def __init__(self, passes: Sequence[ModulePass] = ()):
        self._passes: tuple[ModulePass, ...] = tuple(passes)

    # ---- construction
    @classmethod
    def parse(cls, text: str) -> Pipeline:
        """Parse ``"a,b{opt=1,2 other=3},c"`` (MLIR / xDSL pipeline syntax)."""
        text = text.strip()
        if text.startswith("builtin.module(") and text.endswith(")"):
            text = text[len("builtin.module("):-1]
        try:
            specs = list(parse_pipeline(text))
        except (ArgSpecParseError, ParseError) as e:
            raise LoomError(f"bad pass pipeline {text!r}: {e}") from None
        return cls([make_pass(s.name, s.parameters) for s in specs])

    def add(self, name: str, **options: Any) -> Pipeline:
        """Append pass ``name``; options by python or dashed name, e.g. ``tile_sizes=[32, 32]``."""
        return Pipeline([*self._passes, make_pass(name, _as_parameters(options))])

    def then(self, other: Pipeline | ModulePass) -> Pipeline:
        extra = other.passes if isinstance(other, Pipeline) else (other,)
        return Pipeline([*self._passes, *extra])

    # ---- fluent spellings of the common passes
    def generalize_named_ops(self) -> Pipeline:
        return self.add("linalg-generalize-named-ops")

    def generalize_pooling(self) -> Pipeline:
        return self.add("loom-linalg-generalize-pooling")

    def convert_linalg_to_loops(self) -> Pipeline:
        return self.add("convert-linalg-to-loops")

    def canonicalize(self) -> Pipeline:
        return self.add("canonicalize")

    def cse(self) -> Pipeline:
        return self.add("cse")

    def dce(self) -> Pipeline:
        return self.add("dce")

    def licm(self) -> Pipeline:
        return self.add("licm")

    def remove_dead_allocas(self) -> Pipeline:
        return self.add("loom-remove-dead-allocas")

    def tile_and_interchange(self, tile_sizes: Sequence[int], interchange: Sequence[int] | None = None) -> Pipeline:
        return self.add("scf-tile-and-interchange", tile_sizes=list(tile_sizes),
                        interchange=list(interchange) if interchange else None)

    def loop_interchange(self, permutation: Sequence[int]) -> Pipeline:
        return self.add("scf-loop-interchange", permutation=list(permutation))

    def __getattr__(self, attr: str) -> Callable[..., Pipeline]:
        # Any other registered pass by its python spelling: .lower_affine(), .scf_for_loop_unroll()
        if attr.startswith("_"):
            raise AttributeError(attr)
        from loom.passes import available_passes

        name = attr.replace("_", "-")
        if name not in available_passes():
            raise AttributeError(f"Pipeline has no method {attr!r} and there is no pass {name!r}")
        return lambda **options: self.add(name, **options)

    # ---- inspection
    @property
    def passes(self) -> tuple[ModulePass, ...]:
        return self._passes

    def __str__(self) -> str:
        return ",".join(_pass_text(p) for p in self._passes)

    def __repr__(self) -> str:
        return f"Pipeline.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pipeline) and self._passes == other._passes

    def __hash__(self) -> int:
        return hash(self._passes)

    def __len__(self) -> int:
        return len(self._passes)

    def __iter__(self) -> Iterator[ModulePass]:
        return iter(self._passes)

    # ---- running
    def run(self, module: ModuleOp, dump: DumpCallback | None = None,
            ctx: Context | None = None, verify: bool = True) -> ModuleOp:
        """Run the passes on ``module`` in place (and return it).

        ``dump(pass_text, module)`` is called after each pass. A pass that fails,
        or leaves IR that does not verify, raises LoomError naming it."""
        ctx = ctx or default_context()
        if verify:  # else a malformed input fails inside some pass, blaming it
            try:
                module.verify()
            except Exception as e:
                raise LoomError(f"input IR does not verify: {_failing_op(module)}: {e}",
                                where=f"input of pipeline {self}") from e
        for p in self._passes:
            text = _pass_text(p)
            try:
                p.apply(ctx, module)
            except LoomError:
                raise
            except Exception as e:  # xDSL signals failure with several exception types
                raise LoomError(f"pass failed: {type(e).__name__}: {e}", where=f"pass {text}") from e
            if verify:
                try:
                    module.verify()
                except Exception as e:
                    raise LoomError(f"IR does not verify after the pass: {e}", where=f"pass {text}") from e
            if dump is not None:
                dump(text, module)
        return module

    def run_clone(self, module: ModuleOp, dump: DumpCallback | None = None, ctx: Context | None = None) -> ModuleOp:
        """A clone of ``module`` with the passes run, verified once at the end (``run_verified_once``); with
        ``dump``, every pass is verified."""
        if dump is not None:
            return self.run(module.clone(), dump=dump, ctx=ctx)
        return self.run_verified_once(module.clone(), module.clone, ctx=ctx)

    def run_verified_once(self, module: ModuleOp, input_again: Callable[[], ModuleOp],
                          ctx: Context | None = None) -> ModuleOp:
        """``run`` on an input known to verify, verifying once, at the end (verifying costs about a pass's time
        in xDSL). If a pass fails or the result does not verify, the passes run again on ``input_again()`` (the
        same input afresh) verifying after each one, so the error is the one ``run`` gives (naming the first pass
        that failed or left IR that does not verify)."""
        try:
            self.run(module, ctx=ctx, verify=False)
            module.verify()
        except Exception as e:
            self.run(input_again(), ctx=ctx)  # raises run's error
            if isinstance(e, LoomError):
                raise
            raise LoomError(f"IR does not verify after the pipeline: {e}", where=f"pipeline {self}") from e
        return module


def default_context() -> Context:
    """loom's context (``loom.dialects.context``): every xDSL dialect and loom's own."""
    from loom.dialects import context

    return context()


__all__ = ["Pipeline", "DumpCallback", "make_pass", "default_context"]


def _failing_op(module: ModuleOp) -> str:
    """The first op that fails to verify on its own (xDSL's message does not always name it), innermost first."""
    for op in module.walk(reverse=True):
        try:
            op.verify(verify_nested_ops=False)
        except Exception:
            parent = op.parent_op()
            while parent is not None and not hasattr(parent, "sym_name"):
                parent = parent.parent_op()
            inside = f" in @{parent.sym_name.data}" if parent is not None else ""
            return f"{op.name}{inside}"
    return "the module"

