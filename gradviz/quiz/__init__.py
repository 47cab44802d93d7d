"""Predict, then check: what a student types as an answer, how it is checked, and the wrong answers worth offering.

Pure Python and numpy (no widget libraries), so an autograder can use it on its own:

>>> from gradviz.quiz import parse_answer, check_answer
>>> parse_answer("0.5*5*4")
array(10.)
>>> check_answer("[10, 10]", [10.0, 10.0], "float32")["ok"]
True
>>> check_answer("10", [10.0, 10.0], "float32")["key"]
'v_shape_broadcast'

The widget's practice mode (:func:`gradviz.practice`) asks its questions with these; its
front end (``gradviz/widget/static/practice.js``) parses and checks the same way, so a saved page
checks answers with no kernel and says what Python would say.
"""

from .answers import AnswerError, parse_answer, LIMITS
from .checking import check_answer, tolerance, shape_text
from .mistakes import distractors, KINDS
from .selection import select

__all__ = ["AnswerError", "parse_answer", "LIMITS", "check_answer", "tolerance", "shape_text", "distractors", "KINDS", "select"]
