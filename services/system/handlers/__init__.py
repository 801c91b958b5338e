"""The task bodies, one typed object per process that runs them (one module each, so that a process
imports only what its own tasks use).

A worker builds its handlers with the services they use and binds them with ``Queues.serve``; the
tasks registered in ``services.system.queues`` call their methods.
"""
