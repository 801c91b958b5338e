"""The learner: insights, synapses and the weekly synthesis, written under ``obsirag/`` in the vault.

Modules: ``schedule`` (when: active hours, intervals, synthesis slots), ``cycle`` (one learner cycle and
its catalog state), ``generation`` (model calls at learner priority, paused and metered), ``insights``
(semantic field, questions, answer checks), ``insight_files``, ``synapses``, ``synthesis`` (what each
writes), ``artifacts`` (Markdown writers that create or append, never rewrite), ``similarity`` (close
notes from stored vectors, served by the indexer) and ``prompts``.
"""
