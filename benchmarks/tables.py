"""What the benchmark scripts share: a markdown table from a header and formatted rows."""


def markdown_table(head, rows):
    """``head``: column titles; ``rows``: lists of already formatted cells."""
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)
