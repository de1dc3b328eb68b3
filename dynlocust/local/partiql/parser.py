"""The grammar of PartiQL's statements: SELECT, INSERT, UPDATE, DELETE and EXISTS, with parameters bound."""

from __future__ import annotations

from dynlocust.local import errors
from dynlocust.local.partiql.ast import AV, Path, Statement
from dynlocust.local.partiql.conditions import ConditionParser
from dynlocust.local.partiql.lexer import TABLE_TOKEN, malformed
from dynlocust.local.partiql.messages import (
    ALIASING,
    ITEM_SYNTAX,
    NOT_DML,
    ON_INDEX,
    PARAMS_MISMATCH,
    PATH_COMPONENT,
    STAR_AND_OTHERS,
)

_RETURNING = {
    "ALL OLD": "ALL_OLD",
    "MODIFIED OLD": "UPDATED_OLD",
    "ALL NEW": "ALL_NEW",
    "MODIFIED NEW": "UPDATED_NEW",
}


class _Parser(ConditionParser):
    """A statement: its kind, table and index, clauses; the parameters it uses are counted against those given."""

    def statement(self) -> Statement:
        kind, text = self.peek()
        word = text.upper() if kind == "id" else ""
        if word == "SELECT":
            st = self.select()
        elif word == "INSERT":
            st = self.insert()
        elif word == "UPDATE":
            st = self.update()
        elif word == "DELETE":
            st = self.delete()
        elif word == "FROM":
            st = self.update_from()
        elif word == "EXISTS":
            self.next()
            self.expect("(")
            st = self.select()
            st.kind = "EXISTS"
            self.expect(")")
        else:
            raise malformed(NOT_DML)
        self.accept(";")
        if self.peek()[0] != "eof":
            raise malformed("Unexpected token after expression")
        if self.used != len(self.params):
            raise errors.validation(PARAMS_MISMATCH)
        return st

    def table(self) -> tuple[str, str | None]:
        """`name`, `"name"`, `name.index`, `"name"."index"`: a table name may hold '-' (and '.' when quoted)."""
        self._skip()
        names = []
        for _ in range(2):
            if self.text.startswith('"', self.pos):
                names.append(self._quoted('"'))
            else:
                m = TABLE_TOKEN.match(self.text, self.pos)
                if not m:
                    raise malformed("expected a table name")
                names.append(m.group())
                self.pos = m.end()
            if not self.text.startswith(".", self.pos):
                break
            self.pos += 1
        if self.at("AS"):
            raise errors.validation(ALIASING)
        return names[0], (names[1] if len(names) > 1 else None)

    def select(self) -> Statement:
        self.expect("SELECT")
        paths: list[Path] = []
        star = False
        while True:
            if self.accept("*"):
                star = True
            else:
                at = self.next_at()
                paths.append(self.path())
                if self.at("("):  # a function call: the service reads its name as a path that cannot go on
                    raise errors.validation(PATH_COMPONENT + at)
                if self.at("AS"):
                    raise errors.validation(ALIASING)
            if not self.accept(","):
                break
        if star and paths:
            raise errors.validation(STAR_AND_OTHERS)
        self.expect("FROM")
        table, index = self.table()
        st = Statement("SELECT", table, index, None if star else paths)
        if self.accept("WHERE"):
            st.where = self.condition()
        if self.accept("ORDER"):
            self.expect("BY")
            st.order_by = self.path()
            if self.accept("DESC"):
                st.descending = True
            else:
                self.accept("ASC")
        return st

    def insert(self) -> Statement:
        self.expect("INSERT")
        self.expect("INTO")
        table, index = self.table()
        if index is not None:
            raise errors.validation(ON_INDEX)
        self.expect("VALUE")
        if self.peek() != ("op", "{") and self.peek() != ("op", "?"):
            raise errors.validation(ITEM_SYNTAX)
        item = self.value(None, 0)
        if "M" not in item:
            raise errors.validation(ITEM_SYNTAX)
        if self.at("RETURNING"):
            raise errors.validation("RETURNING is not supported in INSERT")
        return Statement("INSERT", table, item=item["M"])

    def update(self) -> Statement:
        self.expect("UPDATE")
        table, index = self.table()
        if index is not None:
            raise errors.validation(ON_INDEX)
        st = Statement("UPDATE", table)
        self.assignments(st)
        self.expect("WHERE")
        st.where = self.condition()
        st.returning = self.returning()
        return st

    def update_from(self) -> Statement:
        """PartiQL's FROM-first form, `FROM t WHERE c SET a = 1 [REMOVE b]`: an UPDATE (issue 45, as the service
        runs it)."""
        self.expect("FROM")
        table, index = self.table()
        if index is not None:
            raise errors.validation(ON_INDEX)
        st = Statement("UPDATE", table)
        self.expect("WHERE")
        st.where = self.condition()
        self.assignments(st)
        st.returning = self.returning()
        return st

    def assignments(self, st: Statement) -> None:
        """An update's SET and REMOVE clauses, in any number and order; at least one."""
        while True:
            if self.accept("SET"):
                while True:
                    path = self.path()
                    self.expect("=")
                    self.assigning = True
                    st.sets.append((path, self.operand()))
                    self.assigning = False
                    if not self.accept(","):
                        break
            elif self.accept("REMOVE"):
                st.removes.append(self.path())
                while self.accept(","):
                    st.removes.append(self.path())
            else:
                break
        if not st.sets and not st.removes:
            raise malformed("expected SET or REMOVE")

    def delete(self) -> Statement:
        self.expect("DELETE")
        self.expect("FROM")
        table, index = self.table()
        if index is not None:
            raise errors.validation(ON_INDEX)
        st = Statement("DELETE", table)
        self.expect("WHERE")
        st.where = self.condition()
        st.returning = self.returning()
        if st.returning not in (None, "ALL_OLD"):
            said = next(k for k, v in _RETURNING.items() if v == st.returning)
            raise errors.validation(
                f"Invalid returning clause: RETURNING {said} *. "
                "Only RETURNING ALL OLD * is allowed in DELETE statements."
            )
        return st

    def returning(self) -> str | None:
        if not self.accept("RETURNING"):
            return None
        words = []
        for _ in range(2):
            words.append(self.next()[1].upper())
        rv = _RETURNING.get(" ".join(words))
        if rv is None:
            raise malformed("Unexpected term")
        if not self.accept("*"):
            raise errors.validation("Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause")
        return rv


def parse(text: str, params: list[AV] | None = None) -> Statement:
    """A parsed statement with its parameters bound; ValidationException in the service's words otherwise."""
    return _Parser(text, list(params or ())).statement()
