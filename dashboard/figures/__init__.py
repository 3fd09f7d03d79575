"""The dashboard's figures and tables: pure functions from rows (plain dicts) to ``go.Figure``
(or, where a figure holds hundreds of traces, to Plotly's JSON of it: :mod:`.time_to_eps`).

A *job row* is a dict with ``id``, ``solver``, ``params``, ``seed``, ``dataset``, ``loss``,
``gamma``, ``l1``, ``l2``, ``normalize``, ``objective_hash``, ``status``, ``trace_mode``
(optional: None before a worker starts the job) and ``trace``, a dict of equal-length lists
``seq``, ``iteration``, ``epoch``, ``time_s``, ``primal``, ``gap``.
*References* map an ``objective_hash`` to ``{"primal": P*, "gap": certificate}``.

What is computed from the traces (gaps, suboptimality, time to ε, bands over seeds,
ranking, profiles) is :mod:`faceoff.core.analysis`; these modules name and draw it:
:mod:`.labels` (names of settings, objectives, axes), :mod:`.style` (colours, line styles,
the grey "no time" layer, the blank figure), :mod:`.compare` (convergence curves),
:mod:`.time_to_eps` (bars and heatmap of time to ε), :mod:`.ranking`, :mod:`.profiles`
(performance and data profiles), :mod:`.advisor` (primal vs dual work) and :mod:`.export`
(CSV and file names).
"""
