"""Evaluation: how good the drafts are, against labelled PRs or the editors' recorded decisions.

``gold`` reads labelled PRs, ``runner`` drafts them with one configuration, ``summary`` computes the
figures (``metrics``), ``report`` writes eval.json / eval.md / eval.html, ``comparison`` pairs two runs
with a significance test (``significance``), and ``reviews`` reads what editors decided. The core of
``digest eval``; it never imports Prefect (the flow lives in ``flows/evaluation.py``).
"""
