"""The labelling workflow: choose the conversations worth a person's time, label them on a page, import the labels.

``choose_conversations`` picks the judge's least certain conversations (or a random sample), balanced across strata;
``page_data`` + ``write_label_page`` make the self-contained HTML page a clinician labels offline with the
keyboard; ``check_labels`` / ``import_labels`` validate the exported CSV against the run, every error naming its
line, and file it in ``evals/labels/``. The command line is ``convoeval label`` (``docs/agreement.md``).

Example (needs a judged run, so not run as a doctest)::

    frames = load_folder("reports/billing")
    chosen = choose_conversations(frames, sample=30, stratify="scenario")
    write_label_page(page_data(frames, chosen, source="billing"), "label.html")
"""

from convoeval.labelling.importing import LabelCheck, LabelImportError, check_labels, import_labels
from convoeval.labelling.page import label_page_html, page_data, write_label_page
from convoeval.labelling.selection import (
    SELECTION_COLUMNS,
    LabelPageError,
    choose_conversations,
    conversation_priority,
    load_folder,
)

__all__ = [
    "SELECTION_COLUMNS",
    "LabelCheck",
    "LabelImportError",
    "LabelPageError",
    "check_labels",
    "choose_conversations",
    "conversation_priority",
    "import_labels",
    "label_page_html",
    "load_folder",
    "page_data",
    "write_label_page",
]
