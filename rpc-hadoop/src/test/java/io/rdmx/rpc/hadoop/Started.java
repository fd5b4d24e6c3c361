package io.rdmx.rpc.hadoop;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.ipc.RPC;

/** The servers and proxies one test started, stopped after it (proxies first), and the client settings tests use. */
final class Started {
    private final List<RPC.Server> servers = new ArrayList<>();
    private final List<Object> proxies = new ArrayList<>();

    /**
     * @param s a started server
     */
    void server(RPC.Server s) {
        servers.add(s);
    }

    /**
     * @param p a proxy
     */
    void proxy(Object p) {
        proxies.add(p);
    }

    /** Stops every proxy, then every server. */
    void stopAll() {
        for (Object p : proxies) {
            RPC.stopProxy(p);
        }
        for (RPC.Server s : servers) {
            s.stop();
        }
        proxies.clear();
        servers.clear();
    }

    /**
     * @return an empty configuration whose clients give up on an unreachable server at once (no retries, 2 s)
     */
    static Configuration clientConf() {
        Configuration conf = new Configuration(false);
        conf.setInt(CommonConfigurationKeys.IPC_CLIENT_CONNECT_MAX_RETRIES_KEY, 0);
        conf.setInt(CommonConfigurationKeys.IPC_CLIENT_CONNECT_TIMEOUT_KEY, 2000);
        return conf;
    }
}
