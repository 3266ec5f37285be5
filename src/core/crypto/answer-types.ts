/**
 * The `typ` header of the JWS the registry puts in a discovery or routing answer's `signed_response`
 * (docs/discovery.md). Each kind has its own, so a signature over routing advice never passes for a
 * discovery answer, nor either for anything else the registry signs. In core because the registry
 * signs with them and its clients (src/client, federated discovery) verify with them.
 */
export const DISCOVERY_TYP = 'ward-discovery+jwt';
export const ROUTING_TYP = 'ward-routing+jwt';
