"""``convoeval label``: a labelling page for a run's conversations, and ``convoeval label import`` to bring labels back."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from convoeval.cli._base import UsageError, _int, command

_IMPORT = "import"
# convoeval.labelling is imported in the handlers, as the other commands' packages are: it loads pandas and the
# pipeline's frames (about as long again as the whole CLI's start-up), which `convoeval --help` should not pay for.


def _add_label_parser(sub: Any) -> None:
    p = sub.add_parser(
        "label", help="write a labelling page for a run (or import the labels it exported)",
        usage="convoeval label RESULTS [--sample N] [--stratify COLUMN] [--random] [--seed N] [--out PAGE.html]\n"
              "       convoeval label import LABELS.csv RESULTS [--out DIR_OR_FILE]",
        description="RESULTS: pick conversations of a run (a results folder, a run's or a sweep's) and write a "
                    "self-contained HTML page on which a person labels each rubric criterion pass / fail / unsure "
                    "with the keyboard, offline; the page keeps its progress in the browser and exports the labels "
                    "as CSV (evals/labels/README.md). By default the conversations where the judge is least certain "
                    "(its samples disagree, or the holistic score is near a status threshold), balanced across "
                    "--stratify; --random for a random sample (what calibrated estimates assume). "
                    "import LABELS.csv RESULTS: check an exported CSV against the run (every error with its line; "
                    "exit 1 when there is one) and copy it into evals/labels/ (or --out). To label a results folder "
                    "that is itself named import, write it as ./import.")
    p.add_argument("paths", nargs="+", metavar="RESULTS", help="the results folder; or: import LABELS.csv RESULTS")
    p.add_argument("--sample", type=_int, default=30, metavar="N", help="conversations on the page (default 30)")
    p.add_argument("--stratify", metavar="COLUMN",
                   help="balance the sample across this column's values (scenario, agent, target, type, status)")
    p.add_argument("--random", action="store_true", help="a seeded random sample instead of the least certain")
    p.add_argument("--seed", type=_int, default=0, metavar="N", help="seed of the random order (default 0)")
    p.add_argument("--out", metavar="PATH",
                   help="the page (default: RESULTS/label-<N>.html); with import: a folder or file "
                        "(default: evals/labels/)")


@command("label")
def _label(args: argparse.Namespace) -> int:
    from convoeval.labelling import LabelPageError

    try:
        if args.paths[0] == _IMPORT:
            return _import(args)
        return _page(args)
    except LabelPageError as exc:
        raise UsageError(str(exc)) from None


def _page(args: argparse.Namespace) -> int:
    from convoeval.labelling import choose_conversations, load_folder, page_data, write_label_page

    if len(args.paths) != 1:
        raise UsageError(f"label takes one results folder, got {len(args.paths)}: {' '.join(args.paths)} "
                         "(to import labels: convoeval label import LABELS.csv RESULTS)")
    results = Path(args.paths[0])
    frames = load_folder(results)
    chosen = choose_conversations(frames, sample=args.sample, stratify=args.stratify, random=args.random,
                                  seed=args.seed)
    source = results.expanduser().resolve().name
    out = Path(args.out) if args.out else results / f"label-{len(chosen)}.html"
    data = page_data(frames, chosen, source=source)
    write_label_page(data, out)
    n_criteria = int(chosen["n_criteria"].sum())
    strata = chosen["stratum"].value_counts().sort_index()
    print(f"{len(chosen)} conversation(s), {n_criteria} criteria to label ({chosen['method'].iloc[0]}"
          + (f"; by {args.stratify}: " + ", ".join(f"{k} {v}" for k, v in strata.items()) if args.stratify else "")
          + ")")
    if len(chosen) < args.sample:
        print(f"only {len(chosen)} conversation(s) have a rubric: all of them are on the page")
    print(f"page: {out} (id {data['id']}); open it in a browser, label, Export CSV, then: "
          f"convoeval label import LABELS.csv {results}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from convoeval.labelling import LabelImportError, import_labels

    if len(args.paths) != 3:
        raise UsageError("usage: convoeval label import LABELS.csv RESULTS [--out DIR_OR_FILE]")
    _, labels, results = args.paths
    try:
        check, target = import_labels(labels, results, dest=args.out)
    except LabelImportError as exc:  # the file's own mistakes: every one, with its line; exit 1 like a failed check
        for error in exc.check.errors:
            print(f"error: {error}", file=sys.stderr)
        print(f"convoeval: {len(exc.check.errors)} error(s) in {labels}; nothing imported", file=sys.stderr)
        return 1
    print(check.summary())
    print(f"copied to {target}")
    return 0
