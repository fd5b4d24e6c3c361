package io.rdmx.rpc;

/** The server's handler threw: the class name and message of what it threw, carried back for this call only. */
public final class RemoteRpcException extends RpcException {
    private static final long serialVersionUID = 1L;
    private final String className;
    private final String remoteMessage;
    private final String server;

    /**
     * @param server the server's node name
     * @param className the class name of what the handler threw
     * @param remoteMessage its message (may be null)
     */
    public RemoteRpcException(String server, String className, String remoteMessage) {
        super(className + (remoteMessage == null ? "" : ": " + remoteMessage) + " (remote, from server '" + server
            + "')");
        this.server = server;
        this.className = className;
        this.remoteMessage = remoteMessage;
    }

    /** @return the class name of the exception the handler threw */
    public String className() {
        return className;
    }

    /** @return its message, or null */
    public String remoteMessage() {
        return remoteMessage;
    }

    /** @return the server's node name */
    public String server() {
        return server;
    }
}
