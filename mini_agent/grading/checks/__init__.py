"""The graded checks, one module per exercise: ``checks_NN_topic.py`` grades ``exercises/NN_topic.py``.

Each module holds ``check_*(impl)`` functions marked with :func:`mini_agent.grading.check`.
They ship with the package so any install can grade; :mod:`mini_agent.grading.registry` finds
them and :mod:`mini_agent.grading.worker` runs them.
"""
