"""The bad-input contract every command keeps: exit code 2 and one line on stderr naming what is wrong."""


def assert_one_line_error(r, *parts):
    assert r.returncode == 2, (r.stdout, r.stderr)
    err = r.stderr.strip()
    assert "\n" not in err, err
    for p in parts:
        assert p in err, err
    assert "internal error" not in err
