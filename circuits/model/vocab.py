"""Vocabularies: token strings to ids and back, with an optional BOS token."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from circuits.errors import CircuitError


def _listing(tokens: Sequence[str], most: int = 40) -> str:
    shown = " ".join(repr(t) for t in tokens[:most])
    more = f" … ({len(tokens)} tokens)" if len(tokens) > most else ""
    return shown + more


class Vocab:
    """An ordered list of distinct tokens; ids are positions in the list.

    With `bos`, that token is added at id 0 (unless already listed) and is
    prepended to every input by `encode` unless the input starts with it.
    A vocabulary of single characters splits plain strings into characters;
    any other vocabulary takes lists of tokens, or whitespace-separated text.
    """

    def __init__(self, tokens: Iterable[str], bos: str | None = None):
        tokens = [str(t) for t in tokens]
        if bos is not None and bos not in tokens:
            tokens = [bos, *tokens]
        if not tokens:
            raise CircuitError("a vocabulary needs at least one token")
        seen: dict[str, int] = {}
        for i, t in enumerate(tokens):
            if t in seen:
                raise CircuitError(f"token {t!r} is listed twice in the vocabulary (ids {seen[t]} and {i})")
            seen[t] = i
        self.tokens: tuple[str, ...] = tuple(tokens)
        self.bos = bos
        self.ids: dict[str, int] = seen  # token -> id (read-only by convention)
        self.chars = all(len(t) == 1 for t in tokens if t != bos)

    @classmethod
    def chars_of(cls, alphabet: str, bos: str | None = None) -> "Vocab":
        """A character vocabulary, e.g. `Vocab.chars_of("abcdefghijklmnopqrstuvwxyz")`."""
        return cls(list(alphabet), bos=bos)

    @classmethod
    def numbered(cls, n: int, bos: str | None = None, prefix: str = "t") -> "Vocab":
        """Tokens "t0", "t1", … "t{n-1}" (plus BOS), for models whose tokens have no text."""
        return cls([f"{prefix}{i}" for i in range(n)], bos=bos)

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: str) -> bool:
        return token in self.ids

    def __repr__(self) -> str:
        bos = f", bos={self.bos!r}" if self.bos is not None else ""
        return f"Vocab({_listing(self.tokens, 12)}{bos})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and (self.tokens, self.bos) == (other.tokens, other.bos)

    def __hash__(self) -> int:
        return hash((self.tokens, self.bos))

    @property
    def size(self) -> int:
        return len(self.tokens)

    def id(self, token: str) -> int:
        try:
            return self.ids[token]
        except KeyError:
            raise CircuitError(f"unknown token {token!r}; the vocabulary is {_listing(self.tokens)}") from None

    def split(self, text: str | Sequence[str]) -> list[str]:
        """The tokens of one input, BOS not yet added."""
        if isinstance(text, str):
            return list(text) if self.chars else text.split()
        return [str(t) for t in text]

    def encode(self, text: str | Sequence[str], add_bos: bool | None = None) -> np.ndarray:
        """Token ids of one input: `[seq]` int64. BOS is prepended when the vocabulary has one."""
        tokens = self.split(text)
        if add_bos is None:
            add_bos = self.bos is not None
        offset = 0  # positions in messages are positions in what the user wrote
        if add_bos and self.bos is not None and (not tokens or tokens[0] != self.bos):
            tokens, offset = [self.bos, *tokens], 1
        ids = np.empty(len(tokens), dtype=np.int64)
        for i, t in enumerate(tokens):
            if t not in self.ids:
                raise CircuitError(
                    f"unknown token {t!r} at position {i - offset} of {_show(text)}; "
                    f"the vocabulary is {_listing(self.tokens)}"
                )
            if t == self.bos and i > 0:
                raise CircuitError(
                    f"the BOS token {t!r} may only stand at position 0, "
                    f"but {_show(text)} has it at position {i - offset}"
                )
            ids[i] = self.ids[t]
        return ids

    def decode(self, ids: Iterable[int]) -> list[str]:
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < len(self.tokens):
                raise CircuitError(f"token id {i} is outside the vocabulary (ids 0..{len(self.tokens) - 1})")
            out.append(self.tokens[i])
        return out

    def join(self, tokens: Sequence[str]) -> str:
        """One input as text: characters run together, other tokens spaced."""
        return "".join(tokens) if self.chars else " ".join(tokens)


def _show(text: str | Sequence[str]) -> str:
    s = repr(text) if isinstance(text, str) else repr(list(text))
    return s if len(s) <= 60 else s[:57] + "…"
