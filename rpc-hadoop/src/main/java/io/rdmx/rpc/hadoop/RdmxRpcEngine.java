package io.rdmx.rpc.hadoop;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import javax.net.SocketFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.retry.RetryPolicy;
import org.apache.hadoop.ipc.AlignmentContext;
import org.apache.hadoop.ipc.Client;
import org.apache.hadoop.ipc.ProtocolMetaInfoPB;
import org.apache.hadoop.ipc.ProtocolProxy;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RdmxIpcBridge;
import org.apache.hadoop.ipc.RpcEngine;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.SecretManager;
import org.apache.hadoop.security.token.TokenIdentifier;

/**
 * An {@link RpcEngine} that carries Hadoop's protobuf RPC (the wire of {@code ProtobufRpcEngine2}) over rdmx
 * ({@code io.rdmx.rpc}), chosen by configuration only:
 * {@code rpc.engine.<protocol class name>=io.rdmx.rpc.hadoop.RdmxRpcEngine}.
 *
 * <p>Servers are {@code ProtobufRpcEngine2} servers with an rdmx listener beside their TCP one ({@link RdmxServer}).
 * Proxies learn whether a server has one from the server's TCP port ({@link RdmxEndpoint}); under Kerberos they
 * negotiate Hadoop's SASL (KERBEROS) over rdmx before the first call. With an {@link AlignmentContext}, in
 * asynchronous mode, with a delegation token or {@code hadoop.rpc.protection} integrity/privacy under Kerberos,
 * they call over Hadoop's own TCP client, logged. Engines are cached per protocol for the whole JVM by {@link RPC}; all state they share is static.
 */
public class RdmxRpcEngine implements RpcEngine {
    static final LongAdder CLIENT_RDMX_CALLS = new LongAdder();
    static final LongAdder CLIENT_TCP_CALLS = new LongAdder();
    static final LongAdder SERVER_CALLS = new LongAdder();
    static final LongAdder CLIENT_SASL_SESSIONS = new LongAdder();
    static final LongAdder CLIENT_SASL_REFUSED = new LongAdder();

    static {
        // what loading ProtobufRpcEngine2 does: servers and the metadata proxy need protobuf RPC registered
        RdmxIpcBridge.registerProtobufEngine();
    }

    /** Hadoop makes engines reflectively. */
    public RdmxRpcEngine() {
    }

    /** @return calls this JVM's proxies made over rdmx */
    public static long clientCallsOverRdmx() {
        return CLIENT_RDMX_CALLS.sum();
    }

    /** @return calls this JVM's proxies of this engine made over Hadoop's TCP client (fallbacks) */
    public static long clientCallsOverTcp() {
        return CLIENT_TCP_CALLS.sum();
    }

    /** @return SASL (Kerberos) sessions this JVM's proxies negotiated over rdmx */
    public static long clientSaslSessionsOverRdmx() {
        return CLIENT_SASL_SESSIONS.sum();
    }

    /** @return SASL negotiations over rdmx of this JVM's proxies that failed: the caller was refused */
    public static long clientSaslRefusedOverRdmx() {
        return CLIENT_SASL_REFUSED.sum();
    }

    /** @return Hadoop calls this JVM's servers received over rdmx */
    public static long serverCallsOverRdmx() {
        return SERVER_CALLS.sum();
    }

    @Override
    public <T> ProtocolProxy<T> getProxy(Class<T> protocol, long clientVersion, InetSocketAddress addr,
        UserGroupInformation ticket, Configuration conf, SocketFactory factory, int rpcTimeout,
        RetryPolicy connectionRetryPolicy) throws IOException {
        return getProxy(protocol, clientVersion, addr, ticket, conf, factory, rpcTimeout, connectionRetryPolicy,
            null, null);
    }

    @Override
    public <T> ProtocolProxy<T> getProxy(Class<T> protocol, long clientVersion, Client.ConnectionId connId,
        Configuration conf, SocketFactory factory, AlignmentContext alignmentContext) throws IOException {
        return proxy(protocol, new RdmxInvoker(protocol, clientVersion, connId, conf, factory, null,
            alignmentContext));
    }

    @Override
    public <T> ProtocolProxy<T> getProxy(Class<T> protocol, long clientVersion, InetSocketAddress addr,
        UserGroupInformation ticket, Configuration conf, SocketFactory factory, int rpcTimeout,
        RetryPolicy connectionRetryPolicy, AtomicBoolean fallbackToSimpleAuth, AlignmentContext alignmentContext)
        throws IOException {
        Client.ConnectionId id = RdmxIpcBridge.connectionId(addr, protocol, ticket, rpcTimeout,
            connectionRetryPolicy, conf);
        return proxy(protocol, new RdmxInvoker(protocol, clientVersion, id, conf, factory, fallbackToSimpleAuth,
            alignmentContext));
    }

    @Override
    public ProtocolProxy<ProtocolMetaInfoPB> getProtocolMetaInfoProxy(Client.ConnectionId connId,
        Configuration conf, SocketFactory factory) throws IOException {
        return proxy(ProtocolMetaInfoPB.class, new RdmxInvoker(ProtocolMetaInfoPB.class,
            RPC.getProtocolVersion(ProtocolMetaInfoPB.class), connId, conf, factory, null, null));
    }

    @SuppressWarnings("unchecked")
    private static <T> ProtocolProxy<T> proxy(Class<T> protocol, RdmxInvoker invoker) {
        return new ProtocolProxy<>(protocol, (T) Proxy.newProxyInstance(protocol.getClassLoader(),
            new Class<?>[] {protocol}, invoker), false);
    }

    @Override
    public RPC.Server getServer(Class<?> protocol, Object instance, String bindAddress, int port, int numHandlers,
        int numReaders, int queueSizePerHandler, boolean verbose, Configuration conf,
        SecretManager<? extends TokenIdentifier> secretManager, String portRangeConfig,
        AlignmentContext alignmentContext) throws IOException {
        return new RdmxServer(protocol, instance, conf, bindAddress, port, numHandlers, numReaders,
            queueSizePerHandler, verbose, secretManager, portRangeConfig, alignmentContext);
    }
}
