import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { GqlInputOf } from "../common/inputs.js";
import type { ViewOf } from "../common/views.js";

// GraphQL names a client by its clientId alone (REST also serves the row id).
type OidcClientView = Omit<ViewOf<"oidcClients", "get">, "id">;

@ObjectType({ description: "An OpenID Connect relying party registered by an organization" })
export class OidcClient implements OidcClientView {
  @Field(() => String) clientId: string;
  @Field(() => ID, { nullable: true, description: "Null for Keyward's built-in clients" }) organizationId: string | null;
  @Field(() => Boolean, { description: "Keyward's own client: no organization owns it; only superadmins configure it" }) builtIn: boolean;
  @Field(() => [String], { description: "Keyward API scopes the client may request for delegated tokens (set by superadmins)" }) allowedApiScopes: string[];
  @Field(() => String) name: string;
  @Field(() => [String]) redirectUris: string[];
  @Field(() => [String]) postLogoutRedirectUris: string[];
  @Field(() => [String]) grantTypes: string[];
  @Field(() => Boolean, { description: "Public clients (SPAs, CLIs) have no secret and must use PKCE" }) public: boolean;
  @Field(() => String) tokenEndpointAuthMethod: string;
  @Field(() => [String], { description: "Browser origins allowed to call the token and userinfo endpoints" }) corsOrigins: string[];
  @Field(() => Int) accessTokenTtl: number;
  @Field(() => Int) idTokenTtl: number;
  @Field(() => Int) refreshTokenTtl: number;
  @Field(() => String, { description: "JWS algorithm of the client's ID tokens: RS256 or ES256" }) idTokenSignedResponseAlg: string;
  @Field(() => ID, { nullable: true, description: "The initial access token the client registered itself with (Dynamic Client Registration); null when an admin created it" })
  registrationTokenId: string | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@ObjectType()
export class CreatedOidcClient extends OidcClient implements Omit<ViewOf<"oidcClients", "create">, "id"> {
  @Field(() => String, { nullable: true, description: "Shown once; null for public clients" }) clientSecret: string | null;
}

@ObjectType()
export class OidcClientSecret implements ViewOf<"oidcClients", "rotateSecret"> {
  @Field(() => String) clientId: string;
  @Field(() => String, { description: "Shown once" }) clientSecret: string;
}

@ObjectType({ description: "An application the user allowed to access their account" })
export class OidcConsent implements ViewOf<"oidcClients", "myConsents"> {
  @Field(() => String) clientId: string;
  @Field(() => String) clientName: string;
  @Field(() => [String]) scopes: string[];
  @Field(() => Date) updatedAt: Date;
}

@InputType()
export class OidcClientInput implements GqlInputOf<OidcClientInput, "oidcClients", "create"> {
  @Field(() => String) name: string;
  @Field(() => [String], { nullable: true }) redirectUris?: string[];
  @Field(() => [String], { nullable: true }) postLogoutRedirectUris?: string[];
  @Field(() => [String], { nullable: true, description: "authorization_code, refresh_token, client_credentials, urn:ietf:params:oauth:grant-type:device_code" }) grantTypes?: string[];
  @Field(() => Boolean, { nullable: true }) public?: boolean;
  @Field(() => [String], { nullable: true }) corsOrigins?: string[];
  @Field(() => Int, { nullable: true }) accessTokenTtl?: number;
  @Field(() => Int, { nullable: true }) idTokenTtl?: number;
  @Field(() => Int, { nullable: true }) refreshTokenTtl?: number;
  @Field(() => String, { nullable: true, description: "RS256 (default) or ES256" }) idTokenSignedResponseAlg?: string;
}

@InputType()
export class UpdateOidcClientInput implements GqlInputOf<UpdateOidcClientInput, "oidcClients", "update"> {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => [String], { nullable: true }) redirectUris?: string[];
  @Field(() => [String], { nullable: true }) postLogoutRedirectUris?: string[];
  @Field(() => [String], { nullable: true }) grantTypes?: string[];
  @Field(() => [String], { nullable: true }) corsOrigins?: string[];
  @Field(() => Int, { nullable: true }) accessTokenTtl?: number;
  @Field(() => Int, { nullable: true }) idTokenTtl?: number;
  @Field(() => Int, { nullable: true }) refreshTokenTtl?: number;
  @Field(() => String, { nullable: true, description: "RS256 or ES256" }) idTokenSignedResponseAlg?: string;
}

@InputType()
export class ConfigureOidcClientInput implements GqlInputOf<ConfigureOidcClientInput, "oidcClientAdmin", "configure"> {
  @Field(() => [String], { nullable: true, description: "Keyward API scopes the client may request (profile:read, orgs:read, ssh:keys, ssh:sign, networks:activate)" })
  allowedApiScopes?: string[];
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => Int, { nullable: true }) accessTokenTtl?: number;
  @Field(() => Int, { nullable: true }) idTokenTtl?: number;
  @Field(() => Int, { nullable: true }) refreshTokenTtl?: number;
}
