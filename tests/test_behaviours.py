"""targets/behaviours.py: the attention behaviours by name, as functions of token ids `[b, T] -> [b, T]` (the key
each query should attend to, −1 for none), and the ones a head scan scores by default."""

import numpy as np

from circuits.targets.behaviours import BEHAVIOURS, DEFAULT_BEHAVIOURS, DEFAULT_THRESHOLD


def test_each_behaviour_names_the_key_of_each_query():
    ids = np.array([[0, 1, 2, 1, 2]])  # a b c b c
    assert BEHAVIOURS["previous-token"](ids).tolist() == [[-1, 0, 1, 2, 3]]  # position 0 has no previous token
    assert BEHAVIOURS["current-token"](ids).tolist() == [[0, 1, 2, 3, 4]]
    assert BEHAVIOURS["first-token"](ids).tolist() == [[0, 0, 0, 0, 0]]
    assert BEHAVIOURS["duplicate-token"](ids).tolist() == [[-1, -1, -1, 1, 2]]
    assert BEHAVIOURS["induction"](ids).tolist() == [[-1, -1, -1, 2, 3]]


def test_a_scan_scores_known_behaviours_by_default():
    assert set(DEFAULT_BEHAVIOURS) <= set(BEHAVIOURS) and 0 < DEFAULT_THRESHOLD < 1
