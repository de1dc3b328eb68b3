"""`dynlocust diff BASELINE NEW`: did a change make it worse? A baseline comparison that CI can gate on.

Modules: `load` (either side, from `dynlocust run` results or a `dynlocust compare --save` file), `match` (windows by
phase and target rate, refusals), `stats` (the tests), `runs` and `mapper` (the comparisons), `gate` (`--fail-on`),
`render` (console, Markdown, HTML) and `cli`.
"""
