package org.apache.hadoop.ipc;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.token.SecretManager;
import org.apache.hadoop.security.token.TokenIdentifier;

/**
 * The base of rdmx's Hadoop RPC server: Hadoop's {@code ProtobufRpcEngine2.Server} whose metrics update releases
 * the answer of a call that came over rdmx. Hadoop's handler (and rdmx's {@code direct}/{@code reader} dispatch,
 * through {@link RdmxIpcBridge#runAsHandler}) calls the package-private {@code Server.updateMetrics} after the
 * call ran; only a class of this package can override it. An {@link RdmxServerCall}'s answer is written to the
 * client once this has counted it, so a client that reads the server's metrics right after an answer sees the
 * call counted, as Hadoop's own tests expect (TestProtoBufRpc's Echo2NumOps).
 */
public abstract class RdmxCountingServer extends ProtobufRpcEngine2.Server {
    /**
     * As {@code ProtobufRpcEngine2.Server}'s constructor.
     *
     * @param protocolClass the protocol
     * @param protocolImpl its implementation (a BlockingService)
     * @param conf the configuration
     * @param bindAddress the TCP bind address
     * @param port the TCP port
     * @param numHandlers Hadoop handler threads
     * @param numReaders Hadoop reader threads
     * @param queueSizePerHandler call queue size per handler
     * @param verbose whether to log each call
     * @param secretManager the token secret manager, or null
     * @param portRangeConfig a port range key, or null
     * @param alignmentContext the alignment context, or null
     * @throws IOException as Hadoop's server
     */
    protected RdmxCountingServer(Class<?> protocolClass, Object protocolImpl, Configuration conf, String bindAddress,
        int port, int numHandlers, int numReaders, int queueSizePerHandler, boolean verbose,
        SecretManager<? extends TokenIdentifier> secretManager, String portRangeConfig,
        AlignmentContext alignmentContext) throws IOException {
        super(protocolClass, protocolImpl, conf, bindAddress, port, numHandlers, numReaders, queueSizePerHandler,
            verbose, secretManager, portRangeConfig, alignmentContext);
    }

    /** Hadoop counts the call; then an rdmx call's answer, if it has one yet, is written on this thread. */
    @Override
    void updateMetrics(Call call, long processingStartTimeNanos, boolean connDropped) {
        try {
            super.updateMetrics(call, processingStartTimeNanos, connDropped);
        } finally {
            if (call instanceof RdmxServerCall) {
                ((RdmxServerCall) call).counted();
            }
        }
    }
}
