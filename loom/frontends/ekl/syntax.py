"""The EKL syntax tree, as parsed (no name resolution, no types checked yet).

Every node carries the ``Loc`` of its first token so that later stages can
report errors at the construct they refuse.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loom.frontends.ekl.source import Loc

# ---- type expressions -------------------------------------------------------------


@dataclass
class NamedType:  # f64, REAL, index
    loc: Loc
    name: str


@dataclass
class BoundedIndexType:  # `_1`: an index in [0, 1]
    loc: Loc
    bound: int


@dataclass
class ErrorType:  # `?`
    loc: Loc


@dataclass
class ArrayType:  # scalar[extents]
    loc: Loc
    scalar: NamedType | BoundedIndexType | ErrorType
    extents: list[Expr]


@dataclass
class RefType:  # & T, in& T, out& T, inout& T
    loc: Loc
    kind: str  # "in", "out", "inout"
    pointee: ArrayType | NamedType | BoundedIndexType | ErrorType


TypeExpr = NamedType | BoundedIndexType | ErrorType | ArrayType | RefType

# ---- expressions ------------------------------------------------------------------


@dataclass
class Literal:
    loc: Loc
    kind: str  # bool, index, number, string, identity (:), extent (*), ellipsis (...), error (?)
    value: object = None


@dataclass
class Name:
    loc: Loc
    name: str


@dataclass
class Subscript:
    loc: Loc
    array: Expr
    subscripts: list[Expr]


@dataclass
class Call:
    loc: Loc
    callee: str
    args: list[Expr]


@dataclass
class Unary:
    loc: Loc
    op: str  # - ~
    operand: Expr


@dataclass
class Binary:
    loc: Loc
    op: str
    lhs: Expr
    rhs: Expr


@dataclass
class Ternary:  # c ? a : b
    loc: Loc
    cond: Expr
    if_true: Expr
    if_false: Expr


@dataclass
class IfExpr:  # if c then a else b
    loc: Loc
    cond: Expr
    if_true: Expr
    if_false: Expr


@dataclass
class TypeOp:  # value <: T (unify), value !> T (coerce)
    loc: Loc
    op: str
    value: Expr
    type: TypeExpr


@dataclass
class Reshape:  # value ~ [extents]
    loc: Loc
    value: Expr
    extents: list[Expr]


@dataclass
class Reduce:  # <op i, j< body
    loc: Loc
    op: str  # + * min max
    indices: list[ArgDecl]
    body: Expr


@dataclass
class ArrayLiteral:  # [a, b, ...]
    loc: Loc
    items: list[Expr]


@dataclass
class InRef:  # in expr: read through a reference
    loc: Loc
    value: Expr


@dataclass
class Block:  # { stmts; expr }
    loc: Loc
    stmts: list[Stmt]
    value: Expr


Expr = (
    Literal | Name | Subscript | Call | Unary | Binary | Ternary | IfExpr | TypeOp | Reshape | Reduce
    | ArrayLiteral | InRef | Block
)

# ---- declarations and statements ----------------------------------------------------


@dataclass
class ArgDecl:
    loc: Loc
    name: str
    type: TypeExpr | None = None


@dataclass
class TypeDef:
    loc: Loc
    name: str
    type: TypeExpr


@dataclass
class ConstDef:
    loc: Loc
    name: str
    value: Expr


@dataclass
class StaticDef:
    loc: Loc
    access: str  # local, import, export
    name: str
    type: TypeExpr | None
    init: Expr | None


@dataclass
class Let:
    loc: Loc
    name: str
    indices: list[ArgDecl] | None  # let name[i, j] = ...
    type: TypeExpr | None
    value: Expr


@dataclass
class Out:
    loc: Loc
    name: str
    indices: list[ArgDecl] | None
    value: Expr


Stmt = Let | Out | TypeDef | ConstDef


@dataclass
class KernelDef:
    loc: Loc
    name: str
    params: list[ArgDecl]
    body: list[Stmt] = field(default_factory=list)


@dataclass
class Program:
    items: list[TypeDef | ConstDef | StaticDef | KernelDef]

    def kernels(self) -> list[KernelDef]:
        return [item for item in self.items if isinstance(item, KernelDef)]
