package org.apache.hadoop.ipc;

import io.rdmx.rpc.RpcBody;
import io.rdmx.rpc.hadoop.CountedAnswer;
import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.net.InetAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcErrorCodeProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcStatusProto;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.StringUtils;
import org.apache.hadoop.util.Time;

/**
 * A Hadoop call that came over rdmx, queued into the server's own call queue and run by its own handlers, so
 * the call queue, scheduler, metrics, {@code Server.getCurCall()}, the RetryCache (call id, retry count and
 * the 16-byte client id are the client's) and deferred responses ({@code postponeResponse}/{@code sendResponse},
 * {@code setDeferredResponse}) behave as for a call that came over TCP. Its response completes {@link #response()}
 * with the framed response (delimited {@code RpcResponseHeaderProto}, then the value) as an {@link RpcBody}, which
 * the thread that completes it encodes straight into the client's ring. It completes once the call is answered
 * and Hadoop counted it ({@link CountedAnswer}): the handler's {@code updateMetrics} runs after {@code run()}
 * sent the answer, so a fast client could otherwise read the server's metrics before they count its call.
 */
public final class RdmxServerCall extends Server.Call {
    private final RPC.Server server;
    private final String protocolName;
    private final Writable request;
    private final UserGroupInformation user;
    private final InetAddress host;
    private final CountedAnswer<RpcBody> response = new CountedAnswer<>();
    private Writable value;
    private Throwable error;

    /**
     * @param server the server whose handlers run the call
     * @param callId the client's call id
     * @param retryCount the client's retry count
     * @param clientId the client's 16-byte id
     * @param callerContext the caller context of the request header, or null
     * @param protocolName the protocol of the request header
     * @param request the decoded request
     * @param user the calling user
     * @param host the caller's host, or null
     */
    public RdmxServerCall(RPC.Server server, int callId, int retryCount, byte[] clientId, CallerContext callerContext,
        String protocolName, Writable request, UserGroupInformation user, InetAddress host) {
        super(callId, retryCount, RPC.RpcKind.RPC_PROTOCOL_BUFFER, clientId, null, callerContext);
        this.server = server;
        this.protocolName = protocolName;
        this.request = request;
        this.user = user;
        this.host = host;
    }

    /**
     * @return completed with the response body once the call is answered and Hadoop counted it in its metrics
     *     ({@link RdmxCountingServer}), or failed when the server stops
     */
    public CompletableFuture<RpcBody> response() {
        return response;
    }

    /** Hadoop's {@code Server.updateMetrics} counted this call: its answer may go now (written on this thread). */
    void counted() {
        response.counted();
    }

    @Override
    public UserGroupInformation getRemoteUser() {
        return user;
    }

    @Override
    public InetAddress getHostInetAddress() {
        return host;
    }

    @Override
    public String getProtocol() {
        return "rdmx";
    }

    @Override
    public Void run() throws Exception {
        long start = Time.monotonicNowNanos();
        try {
            value = server.call(rpcKind, protocolName, request, getTimestampNanos());
        } catch (Throwable t) {
            error = t instanceof UndeclaredThrowableException && t.getCause() != null ? t.getCause() : t;
        }
        if (!isResponseDeferred()) {
            getProcessingDetails().set(ProcessingDetails.Timing.PROCESSING, Time.monotonicNowNanos() - start,
                TimeUnit.NANOSECONDS);
            sendResponse();
        }
        return null;
    }

    @Override
    void doResponse(Throwable t, RpcStatusProto status) throws IOException {
        if (t != null) {
            answerError(t, status == null ? RpcStatusProto.FATAL : status, RpcErrorCodeProto.ERROR_RPC_SERVER);
        } else if (error != null) {
            answerError(error, null, null);
        } else {
            answer(value);
        }
    }

    @Override
    public void setDeferredResponse(Writable response) {
        answer(response);
    }

    @Override
    public void setDeferredError(Throwable t) {
        answerError(t != null ? t : new IOException("User code indicated an error without an exception"), null,
            null);
    }

    private RpcResponseHeaderProto.Builder header(RpcStatusProto status) {
        return RpcResponseHeaderProto.newBuilder().setCallId(callId).setStatus(status)
            .setServerIpcVersionNum(RpcConstants.CURRENT_VERSION).setClientId(
                org.apache.hadoop.thirdparty.protobuf.ByteString.copyFrom(clientId)).setRetryCount(retryCount);
    }

    private void answer(Writable v) {
        try {
            response.answer(RdmxIpcBridge.responseBody(header(RpcStatusProto.SUCCESS).build(), v));
        } catch (IOException | RuntimeException e) {
            answerError(e, null, null);
        }
    }

    /** As the stock server: RpcServerException carries its status and code, anything else is an application error. */
    private void answerError(Throwable t, RpcStatusProto status, RpcErrorCodeProto code) {
        RpcStatusProto st = status;
        RpcErrorCodeProto cd = code;
        if (st == null) {
            if (t instanceof RpcServerException) {
                st = ((RpcServerException) t).getRpcStatusProto();
                cd = ((RpcServerException) t).getRpcErrorCodeProto();
            } else {
                st = RpcStatusProto.ERROR;
                cd = RpcErrorCodeProto.ERROR_APPLICATION;
            }
        }
        server.logException(Server.LOG, t, this);
        String className = t.getClass().getName();
        String message = StringUtils.stringifyException(t);
        if (message.startsWith(className + ": ")) {
            message = message.substring(className.length() + 2);
        }
        RpcResponseHeaderProto.Builder h = header(st).setExceptionClassName(className).setErrorMsg(message);
        if (cd != null) {
            h.setErrorDetail(cd);
        }
        try {
            response.answer(RdmxIpcBridge.responseBody(h.build(), null));
        } catch (IOException e) {
            response.completeExceptionally(e);
        }
    }
}
