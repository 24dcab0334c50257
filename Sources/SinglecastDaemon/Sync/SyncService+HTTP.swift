import FoundationEssentials
import SinglecastHTTP

/// One request of a sync over the HTTP engine, and how its status and body become the run's event.
extension SyncService {
    /// Performs one request and reads its answer into the run's event.
    func send(_ request: SyncRequest) async throws(SyncError) -> SyncRun.Event {
        guard let server = settings.server, let user = settings.user else {
            throw SyncError(.misconfigured, settings.problem ?? "sync is not configured")
        }
        let (url, body) = request.http(server: server, flavor: settings.flavor, user: user, device: settings.deviceID)
        var fetchRequest = FetchRequest(
            url: url,
            headers: body == nil
                ? ["Accept: application/json"] : ["Content-Type: application/json", "Accept: application/json"],
            // Sent with every request (preemptively): the API's servers do not all name a realm in their challenge.
            basicAuthUser: user,
            basicAuthPassword: password,
            maxBytes: SyncWire.maxResponseBytes,
            options: transfer
        )
        fetchRequest.postBody = body
        let result: FetchResult
        do {
            result = try await fetch(fetchRequest)
        } catch {
            throw SyncError(.unreachable, "the sync server \(server) could not be reached: \(error)")
        }
        let status = result.response.status
        switch status {
        case 200..<300: break
        case 401, 403:
            throw SyncError(
                .unauthorized,
                "the sync server \(server) refused the user '\(user)' (HTTP \(status)); check sync_user and the password in sync_password_file, then reload"
            )
        case 404 where request == .listDevices || request == .registerDevice:
            throw SyncError(.badResponse, "\(server) has no gPodder API (HTTP 404 for \(Self.path(of: url)))")
        case 408, 429, 500...:
            throw SyncError(.unreachable, "the sync server \(server) answered HTTP \(status); will retry")
        default:
            throw SyncError(.badResponse, "the sync server \(server) answered HTTP \(status) for \(Self.path(of: url))")
        }
        switch request {
        case .registerDevice: return .registered
        case .listDevices: return .devicesListed(try SyncWire.devices(result.body))
        case .pullSubscriptions(let device, _):
            return .subscriptionsPulled(device: device, try SyncWire.subscriptionChanges(result.body))
        case .pushSubscriptions: return .subscriptionsPushed(try SyncWire.uploadResponse(result.body))
        case .pullActions: return .actionsPulled(try SyncWire.actions(result.body))
        case .pushActions: return .actionsPushed(try SyncWire.uploadResponse(result.body))
        }
    }

    private static func path(of url: String) -> String {
        URL(string: url)?.path ?? url
    }
}
