"""What names denote and what values are: scopes, kinds, values, the project index, target versions."""
