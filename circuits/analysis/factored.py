"""A low-rank matrix A @ B kept as its two factors, as TransformerLens's FactoredMatrix."""

from __future__ import annotations

import numpy as np

from circuits.errors import CircuitError


class FactoredMatrix:
    """The product `A @ B` of A `[m, r]` and B `[r, n]`, never multiplied out unless asked (`.AB`).

    W_QK = W_Q^T W_K and W_OV = W_O W_V are d_model × d_model but have rank at most
    d_head; keeping the factors makes the SVD, the norm and the eigenvalues cost
    r × r work instead of d_model × d_model, and keeps the rank visible.
    """

    __array_priority__ = 30  # so ndarray @ FactoredMatrix reaches __rmatmul__

    def __init__(self, A, B, name: str = "factored matrix"):
        A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
        if A.ndim != 2 or B.ndim != 2:
            raise CircuitError(f"{name} needs two 2-D factors; got shapes {A.shape} and {B.shape}")
        if A.shape[1] != B.shape[0]:
            raise CircuitError(
                f"{name}: A has shape {A.shape} but B has shape {B.shape}; A's columns must equal B's rows"
            )
        self.A, self.B = A, B  # [m, r], [r, n]

    # --- shape ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return (self.A.shape[0], self.B.shape[1])

    @property
    def mdim(self) -> int:
        """The inner dimension r: an upper bound on the rank."""
        return self.A.shape[1]

    ndim = 2

    # --- the product and its views ------------------------------------------------------
    @property
    def AB(self) -> np.ndarray:  # [m, n]
        return self.A @ self.B

    @property
    def BA(self) -> np.ndarray:  # [r, r]: same non-zero eigenvalues as AB
        if self.shape[0] != self.shape[1]:
            raise CircuitError(f"BA needs a square product; this one is {self.shape[0]} × {self.shape[1]}")
        return self.B @ self.A

    @property
    def T(self) -> "FactoredMatrix":
        return FactoredMatrix(self.B.T, self.A.T)

    def __array__(self, dtype=None, copy=None):
        return self.AB if dtype is None else self.AB.astype(dtype)

    # --- algebra that stays factored ------------------------------------------------------
    def __matmul__(self, other):
        if isinstance(other, FactoredMatrix):
            self._inner(other.shape[0])
            middle = self.B @ other.A  # [r, r']
            if self.mdim <= other.mdim:
                return FactoredMatrix(self.A, middle @ other.B)
            return FactoredMatrix(self.A @ middle, other.B)
        other = np.asarray(other, dtype=np.float64)
        self._inner(other.shape[0])
        if other.ndim == 1:
            return self.A @ (self.B @ other)  # [m]
        return FactoredMatrix(self.A, self.B @ other)

    def __rmatmul__(self, other):
        other = np.asarray(other, dtype=np.float64)
        if other.shape[-1] != self.shape[0]:
            raise CircuitError(
                f"cannot multiply shape {other.shape} by a {self.shape[0]} × {self.shape[1]} factored matrix"
            )
        if other.ndim == 1:
            return (other @ self.A) @ self.B  # [n]
        return FactoredMatrix(other @ self.A, self.B)

    def _inner(self, rows: int) -> None:
        if rows != self.shape[1]:
            raise CircuitError(
                f"cannot multiply a {self.shape[0]} × {self.shape[1]} factored matrix by one with {rows} rows"
            )

    def __add__(self, other: "FactoredMatrix") -> "FactoredMatrix":
        """A1 B1 + A2 B2 = [A1 A2] [B1; B2]: the sum stays factored, inner dimensions add."""
        if not isinstance(other, FactoredMatrix):
            return NotImplemented
        if other.shape != self.shape:
            raise CircuitError(f"cannot add factored matrices of shapes {self.shape} and {other.shape}")
        return FactoredMatrix(np.hstack([self.A, other.A]), np.vstack([self.B, other.B]))

    def __mul__(self, c: float) -> "FactoredMatrix":
        return FactoredMatrix(self.A * float(c), self.B)

    __rmul__ = __mul__

    def __neg__(self) -> "FactoredMatrix":
        return self * -1.0

    def __sub__(self, other: "FactoredMatrix") -> "FactoredMatrix":
        return self + (-other)

    # --- spectra ---------------------------------------------------------------------------
    def svd(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Compact SVD `U [m, k], S [k], Vh [k, n]` with k = min(r, m, n), from QR of each factor."""
        m, n = self.shape
        k = min(self.mdim, m, n)
        if self.mdim == 0 or k == 0:
            return np.zeros((m, 0)), np.zeros(0), np.zeros((0, n))
        Qa, Ra = np.linalg.qr(self.A)  # [m, ka], [ka, r]
        Qb, Rb = np.linalg.qr(self.B.T)  # [n, kb], [kb, r]
        u, s, vh = np.linalg.svd(Ra @ Rb.T, full_matrices=False)  # the small core
        U, Vh = Qa @ u, vh @ Qb.T
        return U[:, :k], s[:k], Vh[:k]

    @property
    def S(self) -> np.ndarray:
        return self.svd()[1]

    def norm(self) -> float:
        """The Frobenius norm ‖AB‖_F."""
        return float(np.sqrt(np.sum(self.S**2)))

    def rank(self, tol: float | None = None) -> int:
        """Singular values above `tol` (default: the largest times max(m, n)·eps)."""
        S = self.S
        if S.size == 0 or S[0] == 0:
            return 0
        if tol is None:
            tol = S[0] * max(self.shape) * np.finfo(np.float64).eps
        return int(np.sum(S > tol))

    def eigenvalues(self) -> np.ndarray:  # [r] complex
        """The eigenvalues of BA (r × r): AB's non-zero eigenvalues, padded with zeros up to r."""
        if self.mdim == 0:
            return np.zeros(0, dtype=complex)
        return np.linalg.eigvals(self.BA).astype(complex)

    def __repr__(self) -> str:
        m, n = self.shape
        return f"FactoredMatrix({m} × {self.mdim} × {n}, rank {self.rank()}, ‖·‖_F = {self.norm():.4g})"
