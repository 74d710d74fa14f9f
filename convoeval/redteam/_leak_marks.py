"""The red team's marks on a conversation: what ``views.leak_transcripts`` adds to the run report's chat.

The chat itself is the run report's (``convoeval.report.chat``: caller left, agent right, tool chips); the red team
adds its leaks to it: a leaking agent turn framed in red with every quoted canary highlighted, a chip per leak
saying what it was, and the summary line of each leaking case. Every text is escaped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from convoeval._util.html_blocks import MUTED, STATUS_COLORS, badge, css, esc, icon, missing
from convoeval.report.chat import CHAT_BG, chip, message_html

_LEAK_FG, _LEAK_BG = STATUS_COLORS["fail"]


def _leak_chips(leaks: Sequence[dict[str, Any]]) -> list[str]:
    """A chip per leak: a message leak names kind and patient (its text is highlighted in the bubble); the tools'
    reads of one patient's rows are one chip naming the tools (the row ids are in its tooltip: a reader cannot use
    them); a store change says what changed."""
    chips: list[str] = []
    reads: dict[tuple[str, str], list[str]] = {}
    for leak in leaks:
        if leak["source"] == "access_log":
            reads.setdefault((leak["kind"], leak["patient"]), []).append(str(leak["quote"]))
        elif leak["source"] == "store":
            chips.append(chip(f"{leak['kind']} · {leak['patient']} · {leak['quote']}", _LEAK_FG, _LEAK_BG,
                               mark="warning"))
        else:
            chips.append(chip(f"{leak['kind']} · {leak['patient']}", _LEAK_FG, _LEAK_BG, mark="warning"))
    for (kind, patient), quotes in reads.items():
        tools = Counter(q.split(":", 1)[0] for q in quotes)
        via = ", ".join(tool + (f" ×{n}" if n > 1 else "") for tool, n in tools.items())
        chips.append(chip(f"{kind} · {patient} · via {via}", _LEAK_FG, _LEAK_BG, title="\n".join(quotes),
                           mark="warning"))
    return list(dict.fromkeys(chips))


def _said(who: str, turn: int, text: str, *, caller: bool, tools: Sequence[str] = (),
          leaks: Sequence[dict[str, Any]] = ()) -> str:
    label = esc(f"{who} · turn {turn}") + (f" · {icon('warning')} LEAK" if leaks else "")
    tools_html = "".join(chip(t, "#0550ae", "#ddf4ff", mark="tool") for t in tools)
    quotes = [x["quote"] for x in leaks if x["source"] == "message"]
    return message_html(label, [text], patient=caller, tools_html=tools_html, quotes=quotes,
                        frame=_LEAK_FG if leaks else None, below=_leak_chips(leaks), below_align="right")


def unverified_reason(turns: Sequence[dict[str, Any]], leak_turns: Sequence[int]) -> str:
    """Why a legitimate request's leak is one: when the agent verified the caller, if ever, against when it leaked.

    Only a patient the caller verified (``verify_identity`` succeeded) is the caller's to hear about; a leak in a
    legitimate request is data given before that (``run.py``), so the caller's CPF and birth date were never checked.
    """
    checked = [int(t["turn"]) for t in turns if "verify_identity" in (t.get("tools") or ())]
    first = min(leak_turns) if leak_turns else None
    if not checked:
        return "leaked: the agent never verified the caller's identity (no verify_identity call)"
    if first is not None and first < checked[0]:
        return (f"leaked: the agent gave the data at turn {first}, before verifying the caller "
                f"(verify_identity at turn {checked[0]})")
    return (f"leaked: verify_identity was called (turn {checked[0]}) but had not verified this patient when the "
            "agent gave the data")


def case_html(case: dict[str, Any], conversation: dict[str, Any], *, open: bool) -> str:
    """One leaking case as a collapsible chat: a summary line (kinds, turns, target), then the turns."""
    leaks = conversation.get("leaks", [])
    by_turn: dict[int, list[dict]] = {}
    for leak in leaks:
        by_turn.setdefault(int(leak["turn"]), []).append(leak)
    chat = []
    for t in conversation.get("turns", []):
        chat.append(_said("Caller", t["turn"], t["caller"], caller=True))
        chat.append(_said("Agent", t["turn"], t["agent"], caller=False, tools=t.get("tools") or (),
                          leaks=by_turn.get(int(t["turn"]), [])))
    late = [x for turn, found in by_turn.items() if turn not in {t["turn"] for t in conversation.get("turns", [])}
            for x in found]  # a store change seen only after the conversation (turn -1)
    if late:
        chat.append(f"<div{css(text_align='center', margin='8px 0 2px')}>after the conversation: "
                    + "".join(_leak_chips(late)) + "</div>")
    turns = sorted({int(x["turn"]) for x in leaks if int(x["turn"]) >= 0})
    kinds = sorted({x["kind"] for x in leaks})
    # The case id is attack/agent/locale and the target is in "What ran": the line names only what differs.
    strategy = f"<span{css(color=MUTED)}>{esc(case['strategy'])}</span>"
    parts = [badge("fail", "leak"), f"<b>{esc(case['case'])}</b>", strategy,
             f"{len(leaks)} leak(s): {esc(', '.join(kinds))}",
             f"turn {', '.join(map(str, turns))}" if turns else "after the conversation"]
    if bool(case.get("legitimate")):
        served = not missing(case.get("served")) and bool(case["served"])  # NaN when read back from cases.csv
        parts.append("legitimate request, " + ("served" if served else "<b>not served</b>"))
        # A leak in a legitimate request is not a false positive: the data went out before the caller was verified.
        parts.append(f"<b{css(color=_LEAK_FG)}>{esc(unverified_reason(conversation.get('turns', []), turns))}</b>")
    frame = css(margin="6px 0", border="1px solid #d0d7de", border_left=f"4px solid {_LEAK_FG}", border_radius="8px",
                padding="6px 10px")
    chat_box = css(background=CHAT_BG, padding="10px 12px", border_radius="8px", max_width="820px")
    body = f"<div{chat_box}>{''.join(chat)}</div>"
    return (f"<details{' open' if open else ''}{frame}><summary{css(cursor='pointer')}>{' · '.join(parts)}</summary>"
            f"<div{css(margin_top='8px')}>{body}</div></details>")
