"""Saved results of every kind read back through one function: ``load_results(folder)`` recognises the folder's
kind (a run, a red-team run, a fault study, an agreement study, a sweep) by what it holds and returns that kind's
result type; ``FOLDER_KINDS`` is the one registry of the kinds and their loaders (``kinds.py``)."""

from convoeval.folders.kinds import FOLDER_KINDS, FolderKind, UnknownFolderError, folder_kind, load_results

__all__ = ["FOLDER_KINDS", "FolderKind", "UnknownFolderError", "folder_kind", "load_results"]
