"""Interviews on the kit: the 1-5 judge of a saved interview answer and the board per
architecture x question category (reading an interview set's saved files only).

    from evaluation.interview import INTERVIEW_JUDGE, Answered, interview_board
"""

from .board import MANIFEST, interview_board, read_manifest
from .judge import INTERVIEW_JUDGE, JUDGE_SAMPLING, Answered, Rating

__all__ = ["INTERVIEW_JUDGE", "JUDGE_SAMPLING", "MANIFEST", "Answered", "Rating",
           "interview_board", "read_manifest"]
