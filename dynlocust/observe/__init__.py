"""Views of a run: Prometheus metrics, the conclusion in words, the reports and the baseline diff.

They read what the `run` layer counted (a `RequestRecord`, closed windows, results files) and never change it.
"""
