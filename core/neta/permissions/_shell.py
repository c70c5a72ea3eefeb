"""A command line split into the simple commands it runs, read the way bash reads it.

Nothing is run or expanded: quotes are taken off, and each expansion that would run
something (``$(...)``, backticks, ``<(...)``) is kept as its text in the word while the
commands inside it are read too. What a rule cannot judge from the text alone is named in
``ShellCommand.opaque``, so that no allow rule approves it unseen.

``shlex`` is not enough here: it does not see ``$(`` or backticks, loses the difference
between ``2>x`` and ``2 >x``, and cannot read here-documents or ``$'...'``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

SUBSTITUTION = "a command substitution $(...)"
BACKTICKS = "a command substitution in backticks"
PROCESS_SUBSTITUTION = "a process substitution <(...)"
HERE_DOCUMENT = "a here-document"
UNBALANCED_QUOTE = "an unbalanced quote"
UNBALANCED_PARENTHESIS = "an unbalanced parenthesis"
UNBALANCED_BRACE = "an unbalanced ${...}"
UNTERMINATED_BACKTICK = "an unterminated backtick"
ANSI_C_ESCAPES = "ANSI-C quoting $'...' with escapes"
MISSING_TARGET = "a redirection without a target"
CONTROL = "a control character bash reads differently"
ARITHMETIC = "an arithmetic expansion (which may evaluate array subscripts)"
PARAMETER_OPERATOR = "a parameter expansion with an operator ${...}"
QUOTED_CODE = "quoted text holding a substitution another command may run"
SUBSCRIPT = "an array subscript a builtin evaluates"

UNKNOWN = "\x00"
"""In a word's template: text the shell makes up when it runs (an expansion, a glob)."""
_MAX_LEVEL = 16
TOO_DEEP = f"substitutions nested more than {_MAX_LEVEL} deep"

_SEPARATORS = ("&&", "||", ";;&", ";;", ";&", "|&", ";", "|", "&", "(", ")")
_REDIRECTIONS = ("&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>", ">", "<")
_OPERATORS = sorted(_SEPARATORS + _REDIRECTIONS, key=len, reverse=True)
_OPERATOR_START = frozenset(";&|()<>")
_BLANKS = frozenset(" \t")  # not "\r": bash reads it as part of a word
_KEYWORDS = frozenset(  # words that may open a command without being it
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac"}
    | {"time"}
)
_OPENERS = frozenset({"coproc", "function"})  # followed by a name and a body, or a command
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_SIMPLE_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[@*]\])?|[0-9]+|[@*#?$!-]")
# runs code held in a variable's value (prompt expansion, an indirect name)
_RISKY_PARAMETER = re.compile(r"^!|@[A-Za-z]")
_NAME_START = re.compile(r"[A-Za-z_]")
_NAME_REST = re.compile(r"[A-Za-z0-9_]*")
_SPECIAL_PARAMETERS = frozenset("0123456789@*#?$!-")
_GLOB_CHARS = frozenset("*?[")
_BRACE_EXPANSION = re.compile(r"\{[^}]*(,|\.\.)[^}]*\}")
_CODE_IN_TEXT = ("$(", "`", "${", "$[")
_EVALUATING_BUILTINS = frozenset(  # builtins that evaluate a variable name's subscript
    {"printf", "read", "test", "[", "let", "declare", "typeset", "local", "export"}
    | {"readonly", "unset", "mapfile", "readarray", "getopts", "wait", "[["}
)
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_ANSI_C_ESCAPE = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
_ANSI_C_SIMPLE = dict(zip("abeEfnrtv", "\a\b\x1b\x1b\f\n\r\t\v", strict=True))


@dataclass(frozen=True)
class Redirect:
    """One redirection of a simple command.

    Attributes:
        op: the operator (``>``, ``>>``, ``2>`` is ``>`` with ``fd="2"``, ``<<`` ...).
        fd: the file descriptor written before it, or ``""``.
        target: the word after it (a file, a descriptor for ``>&``, a here-document's
            delimiter, a here-string's text).
        body: a here-document's text, once read.
    """

    op: str
    fd: str
    target: str
    body: str | None = None


@dataclass(frozen=True)
class SimpleCommand:
    """One command of a line: its words (quotes taken off) and its redirections.

    Attributes:
        words: the words as written, quotes taken off (an expansion kept as its text).
        redirects: its redirections.
        templates: the words with each part the shell makes up when it runs (an expansion,
            an unquoted glob) as ``UNKNOWN``: what a deny rule compares, any text standing
            there. ``None``: the words themselves.
    """

    words: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    templates: tuple[str, ...] | None = None

    @property
    def shapes(self) -> tuple[str, ...]:
        """``templates``, or the words when nothing in them is made up."""
        return self.words if self.templates is None else self.templates


@dataclass(frozen=True)
class ShellCommand:
    """A command line, read.

    Attributes:
        commands: the simple commands it runs at its top level, in order (split on ``&&``,
            ``||``, ``;``, ``|``, ``&``, newlines and parentheses; leading keywords such as
            ``then`` or ``do`` taken off).
        nested: the commands inside its substitutions (``$(...)``, backticks, ``<(...)``).
        opaque: what no allow rule can judge, in words (empty for a plain command line).
        readable: false when the line is too deeply nested to be read at all.
    """

    commands: tuple[SimpleCommand, ...]
    nested: tuple[SimpleCommand, ...] = ()
    opaque: tuple[str, ...] = ()
    readable: bool = True


@functools.lru_cache(maxsize=256)
def parse_command(text: str) -> ShellCommand:
    """Read ``text`` as bash would, without running or expanding anything."""
    try:
        return _Scanner(_joined_lines(text), 0).read()
    except _TooDeep:
        return ShellCommand((), (), (TOO_DEEP,), readable=False)


def _joined_lines(text: str) -> str:
    r"""``text`` with each backslash-newline outside single quotes taken out.

    Bash does this before it reads anything else: ``$\⏎{x}`` is ``${x}``.
    """
    if "\\\n" not in text:
        return text
    out: list[str] = []
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if quote != "'" and char == "\\" and index + 1 < len(text):
            if text[index + 1] != "\n":
                out.append(text[index : index + 2])
            index += 2
            continue
        if char in "'\"" and quote in ("", char):
            quote = "" if quote else char
        out.append(char)
        index += 1
    return "".join(out)


class _TooDeep(Exception):
    pass


@dataclass
class _Token:
    kind: str  # "word", "separator" or "redirect"
    text: str
    fd: str = ""
    quoted: bool = False
    body: str | None = None
    template: str | None = None  # the text with UNKNOWN for what the shell makes up


class _Scanner:
    def __init__(self, text: str, level: int) -> None:
        if level > _MAX_LEVEL:
            raise _TooDeep
        self.text = text
        self.level = level
        self.pos = 0
        self.opaque: list[str] = []
        self.nested: list[SimpleCommand] = []
        self.heredocs: list[tuple[_Token, str, bool]] = []
        self.unreadable = False  # what it runs cannot be told from the text

    def read(self) -> ShellCommand:
        if _CONTROL_CHARS.search(self.text):
            self._problem(CONTROL, hides=True)
        commands = self._commands(self._tokens(inside=False))
        return ShellCommand(
            tuple(commands), tuple(self.nested), tuple(self.opaque), not self.unreadable
        )

    def _problem(self, reason: str, *, hides: bool = False) -> None:
        """Note what no allow rule can judge; ``hides``: what it runs is not in the text."""
        if reason not in self.opaque:
            self.opaque.append(reason)
        self.unreadable = self.unreadable or hides

    def _merge(self, other: _Scanner) -> None:
        self.nested += other.nested
        for reason in other.opaque:
            self._problem(reason)
        self.unreadable = self.unreadable or other.unreadable

    def _tokens(self, *, inside: bool) -> list[_Token]:
        """Tokens to the end, or inside ``$(``/``<(`` to the parenthesis that closes it."""
        text, tokens, parens = self.text, [], 0
        while self.pos < len(text):
            char = text[self.pos]
            if char in _BLANKS:
                self.pos += 1
            elif text.startswith("\\\n", self.pos):
                self.pos += 2
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif char == "\n":
                self.pos += 1
                tokens.append(_Token("separator", "\n"))
                self._read_heredocs()
            elif char == ")" and inside and parens == 0:
                return tokens
            elif text.startswith("((", self.pos):
                raw = self._arithmetic(2)
                tokens.append(_Token("word", raw, template=UNKNOWN))
            elif char in _OPERATOR_START and not self._at_process_substitution():
                op = self._operator()
                if op == "(":
                    parens += 1
                elif op == ")" and parens:
                    parens -= 1
                tokens.append(_Token("redirect" if op in _REDIRECTIONS else "separator", op))
            else:
                tokens.append(self._word_token(tokens))
        return tokens

    def _at_process_substitution(self) -> bool:
        return self.text[self.pos] in "<>" and self.text.startswith("(", self.pos + 1)

    def _operator(self) -> str:
        op = next(o for o in _OPERATORS if self.text.startswith(o, self.pos))
        self.pos += len(op)
        return op

    def _word_token(self, tokens: list[_Token]) -> _Token:
        value, quoted, template = self._word()
        at = self.pos
        if (
            value.isascii()
            and value.isdigit()
            and not quoted
            and at < len(self.text)
            and self.text[at] in "<>"
            and not self._at_process_substitution()
        ):
            return _Token("redirect", self._operator(), fd=value)
        if tokens and tokens[-1].kind == "redirect" and tokens[-1].text in ("<<", "<<-"):
            self.heredocs.append((tokens[-1], value, not quoted))
        return _Token("word", value, quoted=quoted, template=template)

    def _word(self) -> tuple[str, bool, str]:
        """The next word: its text (quotes taken off), whether quoted, and its template."""
        text, value, shape, quoted = self.text, [], [], False
        bare: list[str] = []  # the unquoted characters: a brace expansion is made of them
        while self.pos < len(text):
            char, following = text[self.pos], text[self.pos + 1 : self.pos + 2]
            if char in _BLANKS or char == "\n":
                break
            if char in _OPERATOR_START:
                if not self._at_process_substitution():
                    break
                value.append(self._substitution(PROCESS_SUBSTITUTION))
                shape.append(UNKNOWN)
            elif char == "\\":
                quoted = True
                piece = "" if following == "\n" else following
                value.append(piece)
                shape.append(piece)
                self.pos += 2
            elif char == "'":
                quoted = True
                piece = self._single_quoted()
                value.append(piece)
                shape.append(piece)
            elif char == '"' or (char == "$" and following == '"'):
                quoted = True
                self.pos += 1 if char == '"' else 2
                piece, piece_shape = self._double_quoted('"')
                value.append(piece)
                shape.append(piece_shape)
            elif char == "$" and following == "'":
                quoted = True
                piece = self._ansi_c()
                value.append(piece)
                shape.append(piece)
            elif char == "$" or char == "`":
                piece = self._dollar()
                value.append(piece)
                shape.append(piece if piece == "$" else UNKNOWN)
            else:
                value.append(char)
                bare.append(char)
                shape.append(UNKNOWN if char in _GLOB_CHARS else char)
                self.pos += 1
        unquoted = "".join(bare)
        if _BRACE_EXPANSION.search(unquoted):  # {rm,-rf,src} is three words made up
            return "".join(value), quoted, UNKNOWN
        return "".join(value), quoted, "".join(shape)

    def _dollar(self) -> str:
        """An expansion starting at ``$`` or a backtick, as its text (a lone ``$`` is text)."""
        text, at = self.text, self.pos
        following = text[at + 1 : at + 2]
        if text.startswith(("$((", "$["), at):
            return self._arithmetic(3 if following == "(" else 2)
        if text[at] == "`" or following in ("(", "{"):
            return self._expansion()
        if following and following in _SPECIAL_PARAMETERS:
            self.pos += 2
        elif _NAME_START.match(following):
            self.pos += 1 + len(_NAME_REST.match(text, at + 1).group(0))  # type: ignore[union-attr]
        else:
            self.pos += 1
            return "$"
        return text[at : self.pos]

    def _arithmetic(self, opening: int) -> str:
        """``$((...))``, ``$[...]`` or a ``((...))`` command, to its close, kept as its text."""
        text, start = self.text, self.pos
        closing, depth = ("]", "[") if text.startswith("$[", start) else (")", "(")
        self.pos += opening
        level = 1 if closing == "]" else 2
        while self.pos < len(text) and level:
            char = text[self.pos]
            if char == depth:
                level += 1
            elif char == closing:
                level -= 1
            self.pos += 1
        if level:
            self._problem(UNBALANCED_PARENTHESIS)
        self._problem(ARITHMETIC)
        return text[start : self.pos]

    def _single_quoted(self) -> str:
        end = self.text.find("'", self.pos + 1)
        if end < 0:
            self._problem(UNBALANCED_QUOTE)
            end = len(self.text)
        value = self.text[self.pos + 1 : end]
        self.pos = end + 1
        self._read_quoted_code(value)
        return value

    def _read_quoted_code(self, value: str) -> None:
        """Read quoted text that holds a substitution as code that may run later.

        A builtin, a prompt, ``trap`` or a variable's later expansion may run it: no allow
        rule approves it, and deny rules see the commands in it.
        """
        if not any(marker in value for marker in _CODE_IN_TEXT):
            return
        self._problem(QUOTED_CODE)
        scanner = _Scanner(value, self.level + 1)
        scanner._double_quoted(None)
        self._merge(scanner)

    def _double_quoted(self, closing: str | None) -> tuple[str, str]:
        """Text up to ``closing`` and its template (``None``: to the end, as in a here-document).

        The template has ``UNKNOWN`` for each expansion.
        """
        text, value, shape = self.text, list[str](), list[str]()
        while self.pos < len(text):
            char, following = text[self.pos], text[self.pos + 1 : self.pos + 2]
            if closing is not None and char == closing:
                self.pos += 1
                return "".join(value), "".join(shape)
            if char == "\\" and following and following in '$`"\\\n':
                piece = "" if following == "\n" else following
                value.append(piece)
                shape.append(piece)
                self.pos += 2
            elif char == "$" or char == "`":
                piece = self._dollar()
                value.append(piece)
                shape.append(piece if piece == "$" else UNKNOWN)
            else:
                value.append(char)
                shape.append(char)
                self.pos += 1
        if closing is not None:
            self._problem(UNBALANCED_QUOTE)
        return "".join(value), "".join(shape)

    def _ansi_c(self) -> str:
        text, start = self.text, self.pos + 2
        end = start
        while end < len(text) and text[end] != "'":
            end += 2 if text[end] == "\\" else 1
        if end >= len(text):
            self._problem(UNBALANCED_QUOTE)
        raw = text[start:end]
        self.pos = end + 1
        if "\\" not in raw:
            self._read_quoted_code(raw)
            return raw
        self._problem(ANSI_C_ESCAPES)
        decoded = _ANSI_C_ESCAPE.sub(_decode_escape, raw)
        self._read_quoted_code(decoded)
        return decoded

    def _expansion(self) -> str:
        """``$(...)``, ``${...}`` or a backtick substitution, kept as its text."""
        if self.text.startswith("$(", self.pos):
            return self._substitution(SUBSTITUTION)
        if self.text.startswith("${", self.pos):
            return self._braced()
        return self._backticks()

    def _substitution(self, reason: str) -> str:
        start = self.pos
        self.pos += 2
        inner = _Scanner(self.text, self.level + 1)
        inner.pos, inner.heredocs = self.pos, self.heredocs
        commands = inner._commands(inner._tokens(inside=True))
        self.pos = inner.pos
        if self.pos < len(self.text):
            self.pos += 1  # the closing parenthesis
        else:
            self._problem(UNBALANCED_PARENTHESIS)
        self._problem(reason)
        self._merge(inner)
        self.nested += commands
        return self.text[start : self.pos]

    def _braced(self) -> str:
        text, start = self.text, self.pos
        self.pos += 2
        while self.pos < len(text):
            char = text[self.pos]
            if char == "}":
                self.pos += 1
                inner = text[start + 2 : self.pos - 1]
                if not _SIMPLE_PARAMETER.fullmatch(inner):
                    self._problem(PARAMETER_OPERATOR, hides=bool(_RISKY_PARAMETER.search(inner)))
                return text[start : self.pos]
            if char == "\\":
                self.pos += 2
            elif char == "'":
                self._single_quoted()
            elif char == '"':
                self.pos += 1
                self._double_quoted('"')
            elif char == "$" or char == "`":
                self._dollar()
            else:
                self.pos += 1
        self._problem(UNBALANCED_BRACE)
        return text[start:]

    def _backticks(self) -> str:
        text, start, inner = self.text, self.pos, []
        end = self.pos + 1
        while end < len(text) and text[end] != "`":
            if text[end] == "\\" and end + 1 < len(text):
                escaped = text[end + 1]
                inner.append(escaped if escaped in "$`\\" else text[end : end + 2])
                end += 2
            else:
                inner.append(text[end])
                end += 1
        if end >= len(text):
            self._problem(UNTERMINATED_BACKTICK)
        self.pos = end + 1
        self._problem(BACKTICKS)
        self._read_nested("".join(inner))
        return text[start : self.pos]

    def _read_nested(self, text: str) -> None:
        scanner = _Scanner(text, self.level + 1)
        read = scanner.read()
        self._merge(scanner)
        self.nested += read.commands

    def _read_heredocs(self) -> None:
        """Read the bodies of the here-documents opened on the line that just ended."""
        text = self.text
        for token, delimiter, expands in self.heredocs:
            lines = []
            while self.pos < len(text):
                end = text.find("\n", self.pos)
                end = len(text) if end < 0 else end
                line = text[self.pos : end]
                self.pos = end + 1
                if (line.lstrip("\t") if token.text == "<<-" else line) == delimiter:
                    break
                lines.append(line)
            token.body = "".join(line + "\n" for line in lines)
            if expands:  # an unquoted delimiter: $(...) and backticks in the body run
                scanner = _Scanner(token.body, self.level + 1)
                scanner._double_quoted(None)
                self._merge(scanner)
        self.heredocs.clear()

    def _commands(self, tokens: list[_Token]) -> list[SimpleCommand]:
        commands: list[SimpleCommand] = []
        words: list[_Token] = []
        redirects: list[Redirect] = []
        index = 0
        while index <= len(tokens):
            token = tokens[index] if index < len(tokens) else None
            if token is None or token.kind == "separator":
                words = _without_openers(words)
                if words or redirects:
                    commands.append(self._command(words, redirects))
                words, redirects = [], []
            elif token.kind == "redirect":
                target = tokens[index + 1] if index + 1 < len(tokens) else None
                if target is None or target.kind != "word":
                    self._problem(MISSING_TARGET)
                    target = _Token("word", "")
                else:
                    index += 1
                if token.text in ("<<", "<<-"):
                    self._problem(HERE_DOCUMENT)
                redirects.append(Redirect(token.text, token.fd, target.text, token.body))
            else:
                words.append(token)
            index += 1
        return commands

    def _command(self, words: list[_Token], redirects: list[Redirect]) -> SimpleCommand:
        texts = tuple(w.text for w in words)
        shapes = tuple(w.text if w.template is None else w.template for w in words)
        name = texts[0] if texts else ""
        if any(_ASSIGNED_SUBSCRIPT.match(word) for word in texts) or (
            name in _EVALUATING_BUILTINS
            and any("[" in word or word in _ARITHMETIC_TESTS for word in texts[1:])
        ):
            self._problem(SUBSCRIPT)
        return SimpleCommand(texts, tuple(redirects), None if shapes == texts else shapes)


_ASSIGNED_SUBSCRIPT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\[")


def _without_openers(words: list[_Token]) -> list[_Token]:
    """``words`` without the keywords that open a command (``then``, ``coproc NAME {``...)."""
    while words and not words[0].quoted:
        first = words[0].text
        if first in _KEYWORDS:
            words = words[1:]
            while first == "time" and words and words[0].text in ("-p", "--"):
                words = words[1:]
        elif first in _OPENERS:
            words = words[1:]
            if len(words) >= 2 and words[1].text == "{":
                words = words[2:]
            elif first == "function" and words:
                words = words[1:]
        else:
            break
    return words


def _decode_escape(match: re.Match[str]) -> str:
    escape = match.group(1)
    if escape[0] in "xuU" and len(escape) > 1:
        code = int(escape[1:], 16)
    elif escape[0] in "01234567":
        code = int(escape, 8)
    elif escape[0] == "c" and len(escape) == 2:
        code = ord(escape[1]) & 0x1F
    else:
        return _ANSI_C_SIMPLE.get(escape, escape)
    return chr(code) if code < 0x110000 else ""
