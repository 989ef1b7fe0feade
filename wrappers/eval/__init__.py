"""Evaluation: the run folder (:mod:`.run`, its one owner), cluster bootstrap and stats, the report
framework and registry (:mod:`.report`), and one package per benchmark (metrics, report)."""
