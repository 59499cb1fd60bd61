"""The MPM directive values and names the start-up oracles try: the live one against the
installed httpd (test_mpm_oracle.py, through hypothesis) and the recordings of older builds
(tools/record_httpd_version.py, a fixed seed)."""

EDGE = ["0", "1", "-1", "2", "3", "16", "25", "30", "64", "75", "250", "256", "400", "199999",
        "200000", "200001", "19999", "20000", "20001", "99999", "100000", "100001", "four", "  12",
        "12abc", "+5", "-0", "99999999999", "", "1.5", "0.5", "2x", "2147483648", "-2147483649"]
NAMES = {
    "prefork": ["StartServers", "MinSpareServers", "MaxSpareServers", "ServerLimit", "MaxRequestWorkers",
                "MaxClients", "MaxConnectionsPerChild", "MaxRequestsPerChild", "ListenBacklog"],
    "worker": ["StartServers", "MinSpareThreads", "MaxSpareThreads", "ServerLimit", "ThreadLimit",
               "ThreadsPerChild", "MaxRequestWorkers", "MaxClients", "MaxConnectionsPerChild",
               "MaxRequestsPerChild", "ListenBacklog", "maxclients", "SERVERLIMIT"],
}
NAMES["event"] = NAMES["worker"] + ["AsyncRequestWorkerFactor"]
