"""Did an interrupted edit land? Decide from the file as it is now, before anything is redone.

A session killed while ``edit_file`` ran leaves a ``tool_use`` without a result. Handing the
model "interrupted, run it again if you still need it" leaves the question to the one party
that cannot know (chapter 3: never ask the model what was done; look at the record). The file
itself is the system of record of an edit: :func:`edit_outcome` compares it with the call's
``old_string`` and ``new_string``:

* ``"applied"``: the file holds the edit's result (``new_string``, and ``old_string`` only
  where ``new_string`` contains it): answer the call as done, do not run it again;
* ``"not_applied"``: the file is still as the call expected (``old_string`` once, no
  ``new_string``, or a file to create that does not exist): run the call now;
* ``"unknown"``: anything else (the file changed another way, is gone, or both strings occur
  independently): run nothing; tell the model to look first.

:data:`RESUME_TEXTS` words each answer. Pure: text in, a word out. Taught in
``notebooks/07_sessions.ipynb``; the same idea for external systems is
:mod:`mini_agent.core.progress` (episode 10).
Source: 004_b74ef821c58ee4ec.txt (再開時は外部状態と照合する; 意図だけあって結果のない項目).
"""

from __future__ import annotations

OUTCOMES = ("applied", "not_applied", "unknown")

RESUME_TEXTS = {
    "applied": ("Reconciled on resume: the session stopped before this call returned, but the "
                "file shows the edit had already been applied; it was not run again."),
    "rerun": ("Reconciled on resume: the session stopped before this call returned and it had "
              "not taken effect, so it was run now. Its result:\n"),
    "unknown": ("Interrupted: the session stopped before this call returned, and whether it "
                "took effect cannot be told from the workspace ({why}). Check the state it "
                "would have changed (read the file, list the directory) before running it "
                "again."),
    "reread": ("Re-run on resume: the session stopped before this read-only call returned; "
               "reading changes nothing, so it was run again now. Its result:\n"),
    "not_rerun": ("Not run again on resume: the session stopped before {call} returned, so it "
                  "may have run in full, in part or not at all, and its output was not "
                  "recorded. Commands are never re-run on resume: repeating one may not be "
                  "safe. Check what it would have changed (files, running processes) before "
                  "running it again."),
}


def edit_outcome(old_string: str, new_string: str, text: str | None) -> str:
    """Return whether an ``edit_file`` call is visible in a file's current ``text``.

    Args:
        old_string: the call's ``old_string`` (``""`` creates a file).
        new_string: the call's ``new_string``.
        text: the file's content now, or None when the file does not exist.

    Returns:
        ``"applied"``, ``"not_applied"`` or ``"unknown"`` (see the module docstring).

    >>> edit_outcome("rate = 0.1", "rate = 0.08", "x = 1\\nrate = 0.08\\n")
    'applied'
    >>> edit_outcome("rate = 0.1", "rate = 0.08", "x = 1\\nrate = 0.1\\n")
    'not_applied'
    """
    if old_string == "":
        if text is None:
            return "not_applied"
        return "applied" if text == new_string else "unknown"
    if text is None or old_string == new_string:
        return "unknown"
    olds, news = text.count(old_string), text.count(new_string) if new_string else 0
    if new_string and old_string in new_string:       # an insertion around old_string
        if news and olds == news * new_string.count(old_string):
            return "applied"
        return "not_applied" if olds == 1 and not news else "unknown"
    if new_string and new_string in old_string:       # a deletion from old_string
        if olds == 1 and news == old_string.count(new_string):
            return "not_applied"
        return "applied" if olds == 0 and news else "unknown"
    if olds == 0:
        return "applied" if news or not new_string else "unknown"
    return "not_applied" if olds == 1 and not news else "unknown"
