import { Field, InputType, ObjectType } from "type-graphql";
import type { GqlInputOf } from "../common/inputs.js";
import type { ViewOf } from "../common/views.js";
import { LinkedSsoIdentity } from "../sso/sso.types.js";

type ExternalProviderSettingsView = ViewOf<"oauthProviders", "listPublic">["settings"];

@ObjectType({ description: "Settings a client needs to present an external provider" })
export class ExternalProviderSettings implements ExternalProviderSettingsView {
  @Field(() => Boolean) requiresDomain: boolean;
  @Field(() => Boolean) supportsRefreshTokens: boolean;
}

type ExternalProviderView = ViewOf<"oauthProviders", "listPublic">;

@ObjectType({ description: "An external identity provider users can sign in with" })
export class ExternalProvider implements ExternalProviderView {
  @Field(() => String, { description: "github or google" }) id: ExternalProviderView["id"];
  @Field(() => String) name: string;
  @Field(() => String, { description: "oauth2 or oidc" }) type: ExternalProviderView["type"];
  @Field(() => Boolean) isConfigured: boolean;
  @Field(() => Boolean) isActive: boolean;
  @Field(() => ExternalProviderSettings) settings: ExternalProviderSettings;
}

@ObjectType({ description: "An external account linked to a Keyward account" })
export class LinkedAccount implements ViewOf<"linkedAccounts", "listForUser"> {
  @Field(() => String) provider: string;
  @Field(() => String) providerName: string;
  @Field(() => String, { nullable: true }) email: string | null;
  @Field(() => Boolean) emailVerified: boolean;
  @Field(() => String, { nullable: true }) username: string | null;
  @Field(() => String, { nullable: true }) displayName: string | null;
  @Field(() => String, { nullable: true }) avatarUrl: string | null;
  @Field(() => Date) linkedAt: Date;
  @Field(() => Date, { nullable: true }) lastUsedAt: Date | null;
}

@ObjectType()
export class LinkedAccounts implements ViewOf<"linkedAccounts", "listMine"> {
  @Field(() => [LinkedAccount]) linkedAccounts: LinkedAccount[];
  @Field(() => Boolean, { description: "False when unlinking would leave no way to sign in" }) unlinkAvailable: boolean;
  @Field(() => [LinkedSsoIdentity], { description: "Your identities at your organizations' identity providers" }) ssoIdentities: LinkedSsoIdentity[];
}

type ProviderConfigView = ViewOf<"oauthProviders", "list">;

@ObjectType({ description: "A provider's configuration as a superadmin sees it: never the secret" })
export class OAuthProviderConfig implements ProviderConfigView {
  @Field(() => String) provider: ProviderConfigView["provider"];
  @Field(() => String) name: string;
  @Field(() => String, { description: "database, environment or none" }) source: ProviderConfigView["source"];
  @Field(() => String, { nullable: true }) clientId: string | null;
  @Field(() => [String]) scopes: string[];
  @Field(() => Boolean) isEnabled: boolean;
  @Field(() => Boolean) hasClientSecret: boolean;
  @Field(() => String, { description: "Register this callback URL at the provider" }) callbackUrl: string;
  @Field(() => Date, { nullable: true }) updatedAt: Date | null;
}

@InputType()
export class OAuthProviderConfigInput implements GqlInputOf<OAuthProviderConfigInput, "oauthProviders", "configure"> {
  @Field(() => String) clientId: string;
  @Field(() => String, { nullable: true, description: "Required the first time; sealed at rest" }) clientSecret?: string;
  @Field(() => [String], { nullable: true }) scopes?: string[];
  @Field(() => Boolean, { nullable: true }) isEnabled?: boolean;
}

@ObjectType({ description: "Send the browser to authorizationUrl; the flow is bound to this browser by a cookie" })
export class ExternalFlowStart implements Pick<ViewOf<"externalAuth", "start">, "authorizationUrl" | "state"> {
  @Field(() => String) authorizationUrl: string;
  @Field(() => String) state: string;
}
