"""Proving the advice under load: targets (mpmd, httpd), load generators, measurements, verdicts."""
