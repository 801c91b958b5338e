"""The models a user can add (issue #33): the candidates per role, pulls from the hub into the shared model
cache with progress, what is installed, and removing it."""
