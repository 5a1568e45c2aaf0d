-- An ended incarnation whose rows are all gone.
DELETE FROM queen.ephemeral_retired WHERE incarnation = $1
