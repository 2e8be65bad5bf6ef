"""Helper functions called from a kernel are inlined: a nested ``def``, or a plain Python function of the user's.

A researcher factors a kernel into helpers (``def clamp(x, lo, hi): ...``) and expects them to work as in
Python. A helper is traced like kernel code at each call, with its arguments bound to its parameters (positional,
keyword, constant defaults), so it takes the types of its arguments and emits no ``func.call``: the result is the
same IR as writing its body inline. Its names resolve as in Python: its own locals, then (a nested def) the
enclosing kernel's variables at the call, or (a module function) its own closure and module globals. Errors inside
it name the helper's file and line, and the call site. Its body follows the kernel rules (``return`` last), except
that guard clauses (``if x < 0: return 0`` then more code) are rewritten into a final if/else
(``guard_returns.py``); a return inside a loop is refused.

Not inlined: functions of installed libraries (numpy's ``np.clip`` is not kernel code: use ``min``/``max``,
``loom.math``), lambdas bound to names, ``*args``/``**kwargs`` helpers, recursion.
"""

from __future__ import annotations

import ast

from xdsl.dialects.builtin import StringAttr

from loom.errors import LoomError
from loom.frontends.kernel.expressions import _RET_N, LocalFunction
from loom.frontends.kernel.guard_returns import fold_guard_returns
from loom.frontends.kernel.signature import KernelSource, read_source


class InlineMixin:
    """Mixed into ``Tracer``: ``inline_call`` traces a helper's body at a call."""

    def inline_call(self, fobj, node: ast.Call):
        if isinstance(fobj, LocalFunction):
            fdef, src, env = fobj.node, self.src, dict(self.env)
        else:
            src = self._helper_source(fobj, node)
            fdef, env = src.func, {}
        if fdef in self._inlining:
            chain = " -> ".join(f.name for f in [*self._inlining, fdef])
            raise self.err(f"recursive helper calls cannot be inlined ({chain})", node, "recursion")
        if fdef.decorator_list and isinstance(fobj, LocalFunction):
            raise self.err("nested functions cannot be decorated", fdef, "def")
        args = [self.ev(a) for a in node.args]
        kwargs = {k.arg: self.ev(k.value) for k in node.keywords}
        bound = self._bind_params(fobj, fdef, args, kwargs, node)
        call_site = f"{self.src.filename}:{self.src.line(node)}"
        saved = (self.src, self.fname, self._locs, self.env, self.dead, self.result_types, self.loop_depth)
        self.src, self.env, self.dead, self.result_types, self.loop_depth = src, env, {}, None, 0
        if src is not saved[0]:
            self.fname, self._locs = StringAttr(src.filename), {}
        self._inlining.append(fdef)
        try:
            for name, value in bound.items():
                self.bind(name, value)
            self.exec_block(fold_guard_returns(fdef.body), tail=True)
            if _RET_N in self.env:
                out = tuple(self.env[f"$ret{i}"] for i in range(self.env[_RET_N]))
                return out[0] if len(out) == 1 else out
            if _RET_N in self.dead:
                raise self.err(self.dead[_RET_N], fdef, "return")
            return None
        except LoomError as e:
            if e.filename is None:
                self._fill(e, fdef, "def")
            if f"helper '{fdef.name}'" not in e.message:
                e.message += f" (in helper '{fdef.name}' called at {call_site})"
                e.args = (str(e),)
            raise
        finally:
            self._inlining.pop()
            self.src, self.fname, self._locs, self.env, self.dead, self.result_types, self.loop_depth = saved

    def _helper_source(self, fobj, node) -> KernelSource:
        src = self._helper_sources.get(fobj)
        if src is None:
            try:
                src = read_source(fobj)
            except LoomError as e:
                raise self.err(f"cannot inline helper '{fobj.__name__}': {e}", node, "call") from None
            self._helper_sources[fobj] = src
        return src

    def _bind_params(self, fobj, fdef: ast.FunctionDef, args, kwargs, node) -> dict:
        a = fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs:
            raise self.err(f"helper '{fdef.name}' takes *args, **kwargs or keyword-only parameters; kernels "
                           "inline only plain parameters", node, "call")
        names = [p.arg for p in a.posonlyargs + a.args]
        if len(args) > len(names):
            raise self.err(f"helper '{fdef.name}' takes {len(names)} argument(s), got {len(args)}", node, "call")
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in bound:
                what = "an unexpected" if k not in names else "a repeated"
                raise self.err(f"{what} argument '{k}' in the call to helper '{fdef.name}'", node, "call")
            bound[k] = v
        defaults = self._defaults(fobj, fdef)
        for i, name in enumerate(names):
            if name in bound:
                continue
            j = i - (len(names) - len(defaults))
            if j < 0:
                raise self.err(f"helper '{fdef.name}' is missing argument '{name}'", node, "call")
            bound[name] = defaults[j]
        return bound

    def _defaults(self, fobj, fdef: ast.FunctionDef) -> list:
        if isinstance(fobj, LocalFunction):  # evaluated at the call, in the kernel's scope
            return [self.ev(d) for d in fdef.args.defaults]
        return [self.classify(d, f"default of '{fdef.name}'", fdef) for d in (fobj.__defaults__ or ())]
