"""Analysis: factored matrices, head circuits and composition, the path view, the JSON summary, head scans."""

from circuits.analysis.composition import (
    BASELINE_SAMPLES,
    COMPOSITION_KINDS,
    VIRTUAL,
    VIRTUAL_MEANING,
    Composition,
    composition_matrix,
    composition_score,
    composition_scores,
    copying_score,
    exact_composition,
    exact_full_ov,
    exact_token_table,
    exact_virtual_ov,
    full_ov,
    get_head,
    has_qk,
    head_name,
    is_exact,
    ov_circuit,
    peak_offset,
    position_peaks,
    position_table,
    qk_circuit,
    random_baseline,
    random_virtual_baseline,
    token_table,
    virtual_ov,
    virtual_pattern,
    virtual_strength,
    virtual_strengths,
)
from circuits.analysis.factored import FactoredMatrix
from circuits.analysis.paths import check_attention_only, path_count, path_decomposition
from circuits.analysis.summary import analyze, example_inputs

__all__ = [
    "BASELINE_SAMPLES", "COMPOSITION_KINDS", "VIRTUAL", "VIRTUAL_MEANING", "Composition",
    "composition_matrix", "composition_score", "composition_scores", "copying_score", "exact_composition",
    "exact_full_ov", "exact_token_table", "exact_virtual_ov", "full_ov", "get_head", "has_qk", "head_name",
    "is_exact", "ov_circuit", "peak_offset", "position_peaks", "position_table", "qk_circuit",
    "random_baseline", "random_virtual_baseline", "token_table", "virtual_ov", "virtual_pattern",
    "virtual_strength", "virtual_strengths", "FactoredMatrix", "check_attention_only", "path_count",
    "path_decomposition", "analyze", "example_inputs"
]
