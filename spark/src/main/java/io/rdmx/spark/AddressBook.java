package io.rdmx.spark;

import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.rpc.RpcAddress;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.util.RpcUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Executors' rdmx addresses: a Spark RPC endpoint on the driver ({@value #ENDPOINT}) where each executor
 * registers its advertisement before it writes map output, and where readers look up the executors they fetch
 * from (cached). Messages are plain strings (no classes of this jar cross Spark's RPC, so no class loader
 * questions): {@code R\n<executor>\n<host>\n<advertisement>} answered {@code ok} (or a failure naming why it was
 * refused), and {@code L\n<executor>} answered {@code <host>\n<advertisement>} or an empty string for an executor
 * that is not registered.
 *
 * <p>A registration is accepted only from the executor it names ({@link Driver#handle}): a live executor of the
 * application (its block manager registered with the driver's block manager master), on the host its block
 * manager runs on, sent from that host (Spark's RPC context: {@code RpcCallContext.senderAddress}, the address of
 * the connection the message came on), and, once accepted, only again from the same sender address. An executor's
 * entry is dropped when Spark removes the executor ({@code SparkListener.onExecutorRemoved}), and it cannot
 * register again.
 */
final class AddressBook {
    /** The endpoint's name. */
    static final String ENDPOINT = "rdmx-shuffle-addresses";
    private static final ClassTag<String> STRING = ClassTag$.MODULE$.apply(String.class);
    private static final Logger LOG = LoggerFactory.getLogger(AddressBook.class);

    private AddressBook() {
    }

    /** The driver's knowledge of the application's executors. */
    @FunctionalInterface
    interface Executors {
        /**
         * @param executorId an executor id
         * @return the host of its block manager, or null if it is not a live executor of the application
         */
        String host(String executorId);
    }

    /** Whether a sender's address is on an executor's host. */
    @FunctionalInterface
    interface SameHost {
        /**
         * @param executorHost the host of the executor's block manager
         * @param senderHost the host of the sender's address (from the connection)
         * @return true if they are the same machine
         */
        boolean test(String executorHost, String senderHost);
    }

    /**
     * The live executors as the driver's block manager master knows them (an isolated endpoint: asking it from
     * this endpoint's thread cannot wait on this endpoint).
     *
     * @param executorId an executor id
     * @return the host of its block manager, or null
     */
    static String liveExecutorHost(String executorId) {
        SparkEnv env = SparkEnv.get();
        scala.collection.Iterator<BlockManagerId> ids = env.blockManager().master().getMemoryStatus().keysIterator();
        while (ids.hasNext()) {
            BlockManagerId id = ids.next();
            if (id.executorId().equals(executorId)) {
                return id.host();
            }
        }
        return null;
    }

    /**
     * Whether a connection's address is on a host: the same name, or one of the addresses the host name resolves
     * to (the sender's host is the address literal of the connection: no look-up), or a loopback sender and a host
     * of this machine (an executor on the driver's machine may reach the driver over loopback).
     *
     * @param executorHost the host of an executor's block manager
     * @param senderHost the host of a connection's remote address
     * @return true if they are the same machine
     */
    static boolean sameHost(String executorHost, String senderHost) {
        if (executorHost.equalsIgnoreCase(senderHost)) {
            return true;
        }
        try {
            InetAddress sender = InetAddress.getByName(senderHost);
            InetAddress[] known = InetAddress.getAllByName(executorHost);
            for (InetAddress a : known) {
                if (a.equals(sender)) {
                    return true;
                }
            }
            if (sender.isLoopbackAddress()) {
                for (InetAddress a : known) {
                    if (a.isLoopbackAddress() || NetworkInterface.getByInetAddress(a) != null) {
                        return true;
                    }
                }
            }
            return false;
        } catch (IOException e) {
            return false;
        }
    }

    /** An executor's registration: where it serves, and the address it registered from. */
    private record Entry(String host, String advertisement, RpcAddress sender) {
    }

    /** The driver's endpoint. */
    static final class Driver extends TextRpcEndpoint {
        private final Executors executors;
        private final SameHost sameHost;
        private final Map<String, Entry> peers = new ConcurrentHashMap<>();
        /** Executors Spark removed: they cannot register again (their ids are not reused). */
        private final Set<String> removed = ConcurrentHashMap.newKeySet();

        /**
         * @param env the driver's RPC environment
         * @param executors the application's live executors
         * @param sameHost whether a sender is on an executor's host
         */
        Driver(RpcEnv env, Executors executors, SameHost sameHost) {
            super(env, LOG, "rdmx shuffle", "R\n", "L\n");
            this.executors = executors;
            this.sameHost = sameHost;
        }

        @Override
        String answer(String msg, RpcAddress sender) {
            return handle(msg, sender);
        }

        /**
         * @param msg a message
         * @param sender the address of the connection it came on ({@code RpcCallContext.senderAddress})
         * @return the answer
         * @throws IllegalArgumentException if it is malformed
         * @throws SecurityException if a registration does not come from the executor it names (the message
         *         names the executor, the sender and what the driver knows)
         */
        String handle(String msg, RpcAddress sender) {
            String[] parts = msg.split("\n", 3);
            if (parts.length < 2) {
                throw new IllegalArgumentException("malformed rdmx address book message from " + sender);
            }
            if (!msg.startsWith("R\n")) {
                Entry e = peers.get(parts[1]);
                return e == null ? "" : e.host() + "\n" + e.advertisement();
            }
            int nl = parts.length < 3 ? -1 : parts[2].indexOf('\n');
            if (nl < 0) {
                throw new IllegalArgumentException("rdmx address registration without host from " + sender + ": "
                    + msg);
            }
            register(parts[1], parts[2].substring(0, nl), parts[2].substring(nl + 1), sender);
            return "ok";
        }

        private void register(String executorId, String host, String advertisement, RpcAddress sender) {
            String refused = "rdmx address book refused the registration of executor " + executorId + " (host="
                + host + ") from " + sender + ": ";
            if (removed.contains(executorId)) {
                throw new SecurityException(refused + "that executor was removed");
            }
            String known = executors.host(executorId);
            if (known == null) {
                throw new SecurityException(refused + "no live executor of this application has that id");
            }
            if (!known.equals(host)) {
                throw new SecurityException(refused + "its block manager is on host=" + known);
            }
            boolean self = rpcEnv() != null && sender != null && sender.equals(rpcEnv().address());
            if (!self && (sender == null || !sameHost.test(known, sender.host()))) {
                throw new SecurityException(refused + "the sender is not on the executor's host=" + known);
            }
            Entry next = new Entry(host, advertisement, sender);
            Entry before = peers.putIfAbsent(executorId, next);
            if (before != null && !before.sender().equals(sender)) {
                throw new SecurityException(refused + "it registered from " + before.sender() + " already");
            }
            if (before != null) {
                peers.put(executorId, next); // again from the same sender: its new addresses
            }
            if (removed.contains(executorId)) {
                peers.remove(executorId, next); // removed while registering
                throw new SecurityException(refused + "that executor was removed");
            }
        }

        /**
         * Drops a lost executor's entry; it cannot register again.
         *
         * @param executorId the executor Spark removed
         */
        void executorRemoved(String executorId) {
            removed.add(executorId);
            peers.remove(executorId);
        }

        /**
         * @param executorId an executor
         * @return its {@code host\nadvertisement}, or null
         */
        String lookup(String executorId) {
            Entry e = peers.get(executorId);
            return e == null ? null : e.host() + "\n" + e.advertisement();
        }
    }

    /** Drops an executor's entry from the driver's book when Spark removes the executor. */
    static final class Lost extends SparkListener {
        private final Driver driver;

        Lost(Driver driver) {
            this.driver = driver;
        }

        @Override
        public void onExecutorRemoved(SparkListenerExecutorRemoved removed) {
            driver.executorRemoved(removed.executorId());
        }
    }

    /** An executor's view: registers itself, looks up others (cached). */
    static final class Client {
        private final RpcEndpointRef driver;
        private final Map<String, String[]> cache = new ConcurrentHashMap<>();

        Client(SparkConf conf, RpcEnv env) {
            this.driver = RpcUtils.makeDriverRef(ENDPOINT, conf, env);
        }

        void register(String executorId, String host, String advertisement) {
            String r = driver.askSync("R\n" + executorId + "\n" + host + "\n" + advertisement, STRING);
            if (!"ok".equals(r)) {
                throw new IllegalStateException("rdmx address book at the driver refused executor " + executorId
                    + ": " + r);
            }
        }

        /**
         * @param executorId an executor
         * @return {host, advertisement}
         * @throws IllegalStateException if the driver knows no such executor
         */
        String[] lookup(String executorId) {
            String[] c = cache.get(executorId);
            if (c != null) {
                return c;
            }
            String r = driver.askSync("L\n" + executorId, STRING);
            if (r == null || r.isEmpty()) {
                throw new IllegalStateException("the driver's rdmx address book has no executor " + executorId);
            }
            String[] hostAndAd = r.split("\n", 2);
            if (hostAndAd.length < 2) {
                throw new IllegalStateException("rdmx address of executor " + executorId + " malformed: " + r);
            }
            cache.put(executorId, hostAndAd);
            return hostAndAd;
        }

        void forget(String executorId) {
            cache.remove(executorId);
        }
    }
}
