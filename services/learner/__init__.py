"""The learner: insights, synapses and the weekly synthesis, written under ``obsirag/`` in the vault.

Modules: ``schedule`` (when: active hours, intervals, synthesis slots), ``cycle`` (one learner cycle and
its catalog state), ``pacing`` (model calls at learner priority, paused and metered), ``insights``
(semantic field, questions, answer checks), ``insight_files``, ``synapses``, ``synthesis`` (what each
writes) and ``prompts``.

May use ``chat`` (its answers), ``memory``, ``indexing``, ``retrieval``, ``catalog``, ``llm``, ``vault``,
``language`` and ``config``; the vault's writes go through ``vault.artifacts``.
"""
