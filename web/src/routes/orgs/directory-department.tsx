import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate, useParams } from "@tanstack/react-router";
import { useState } from "react";
import { Form } from "react-aria-components";
import { gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { SelectField } from "../../ui/SelectField";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { useSubmit } from "../../ui/useSubmit";
import { carryToDirectory, fieldErrorsOf, GroupPeople, personName, wholeHours } from "./directory-shared";
import { ElevatedNotice } from "./elevated";
import { canHold, isAdmin, useOrg } from "./layout";

const DepartmentQuery = graphql(`
  query DepartmentDetail($orgId: ID!, $departmentId: ID!, $admin: Boolean!) {
    department(orgId: $orgId, departmentId: $departmentId) { id name description canSudo }
    departmentMembers(orgId: $orgId, departmentId: $departmentId) { userId email fullName addedAt }
    departmentPrincipals(orgId: $orgId, departmentId: $departmentId) { id name description }
    principals(orgId: $orgId) @include(if: $admin) { id name }
    members(orgId: $orgId) @include(if: $admin) { userId email fullName }
    certPolicy(orgId: $orgId, departmentId: $departmentId) @include(if: $admin) {
      allowUserExpiry defaultExpiryHours maxExpiryHours allowedExtensions customExtensions standardExtensions isDefault
      requireHardwareKey requireTouch requireVerify
    }
  }
`);
const UpdateDepartment = graphql(`
  mutation UpdateDepartment($orgId: ID!, $departmentId: ID!, $input: UpdateDepartmentInput!) {
    updateDepartment(orgId: $orgId, departmentId: $departmentId, input: $input) { id name description canSudo }
  }
`);
const DeleteDepartment = graphql(`
  mutation DeleteDepartment($orgId: ID!, $departmentId: ID!) { deleteDepartment(orgId: $orgId, departmentId: $departmentId) { message } }
`);
const AddDepartmentMember = graphql(`
  mutation AddDepartmentMember($orgId: ID!, $departmentId: ID!, $email: String!) { addDepartmentMember(orgId: $orgId, departmentId: $departmentId, email: $email) { userId } }
`);
const RemoveDepartmentMember = graphql(`
  mutation RemoveDepartmentMember($orgId: ID!, $departmentId: ID!, $userId: ID!) { removeDepartmentMember(orgId: $orgId, departmentId: $departmentId, userId: $userId) { message } }
`);
const LinkPrincipal = graphql(`
  mutation LinkPrincipalDepartment($orgId: ID!, $principalId: ID!, $departmentId: ID!) {
    linkPrincipalDepartment(orgId: $orgId, principalId: $principalId, departmentId: $departmentId) { message }
  }
`);
const UnlinkPrincipal = graphql(`
  mutation UnlinkPrincipalDepartment($orgId: ID!, $principalId: ID!, $departmentId: ID!) {
    unlinkPrincipalDepartment(orgId: $orgId, principalId: $principalId, departmentId: $departmentId) { message }
  }
`);
const UpdateCertPolicy = graphql(`
  mutation UpdateCertPolicy($orgId: ID!, $departmentId: ID!, $input: CertPolicyInput!) {
    updateCertPolicy(orgId: $orgId, departmentId: $departmentId, input: $input) { isDefault }
  }
`);

type Policy = NonNullable<ResultOf<typeof DepartmentQuery>["certPolicy"]>;

/** What each standard OpenSSH extension lets a certificate's holder do. */
const EXTENSION_WORDS: Record<string, string> = {
  "permit-pty": "a terminal (interactive shell)",
  "permit-port-forwarding": "port forwarding (ssh -L, -R, -D)",
  "permit-agent-forwarding": "agent forwarding (ssh -A)",
  "permit-X11-forwarding": "X11 forwarding (ssh -X)",
  "permit-user-rc": "running ~/.ssh/rc at login",
};

/** /orgs/<slug>/departments/<id>: one department, its people, the principals it grants and its certificate policy. */
export function DepartmentDetail() {
  const org = useOrg();
  const admin = isAdmin(org);
  const { departmentId } = useParams({ from: "/orgs/$slug/departments/$departmentId" });
  const qc = useQueryClient();
  const navigate = useNavigate();
  const q = useQuery({
    queryKey: ["org", org.id, "department", departmentId, admin],
    queryFn: () => gql(DepartmentQuery, { orgId: org.id, departmentId, admin }),
  });
  const [done, setDone] = useState("");
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };

  const back = (
    <p>
      <Link to="/orgs/$slug/departments" params={{ slug: org.slug }}>
        ← Directory
      </Link>
    </p>
  );
  if (q.isPending) return <Loading />;
  if (q.isError)
    return (
      <div className="page dir-page">
        {back}
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      </div>
    );
  const { department: dept, departmentMembers, departmentPrincipals, principals, members, certPolicy } = q.data;
  const linked = new Set(departmentPrincipals.map((p) => p.id));
  const linkable = (principals ?? []).filter((p) => !linked.has(p.id));
  return (
    <div className="page dir-page">
      {back}
      <h1>
        {dept.name} {dept.canSudo && <Badge tone="warn">sudo</Badge>}
      </h1>
      {dept.description && <p className="lead">{dept.description}</p>}
      <ElevatedNotice org={org}>Adding people and linking principals are not shown.</ElevatedNotice>
      {done && <Success>{done}</Success>}

      {admin && <DepartmentDetails key={`${dept.name}|${dept.description}|${dept.canSudo}`} orgId={org.id} dept={dept} onSaved={changed} />}

      <GroupPeople
        title="People"
        groupName={dept.name}
        people={departmentMembers}
        candidates={admin ? (members ?? []) : undefined}
        // A lasting holding: adding people needs a lasting admin role (not a role grant).
        canAdd={canHold(org)}
        empty={admin && canHold(org) ? "Nobody is in this department yet: add members of the organization above." : "Nobody is in this department yet."}
        removal={(p) => `${personName(p)} no longer gets the principals of ${dept.name} in new certificates, and signs under the policy of their other departments.`}
        onAdd={async (p) => {
          await gql(AddDepartmentMember, { orgId: org.id, departmentId: dept.id, email: p.email });
          await changed(`${personName(p)} added to ${dept.name}.`);
        }}
        onRemove={async (p) => {
          await gql(RemoveDepartmentMember, { orgId: org.id, departmentId: dept.id, userId: p.userId });
          await changed(`${personName(p)} removed from ${dept.name}.`);
        }}
      />

      <section aria-labelledby="granted">
        <h2 id="granted">Principals it grants</h2>
        {admin && canHold(org) && (
          <LinkForm
            label="Link a principal"
            placeholder={linkable.length === 0 ? "Every principal is linked" : "Choose a principal…"}
            options={linkable.map((p) => ({ id: p.id, name: p.name }))}
            formLabel={`Link a principal to ${dept.name}`}
            onLink={async (p) => {
              await gql(LinkPrincipal, { orgId: org.id, principalId: p.id, departmentId: dept.id });
              await changed(`${dept.name} now grants ${p.name}.`);
            }}
          />
        )}
        {departmentPrincipals.length === 0 ? (
          <Empty>
            <p>This department grants no principal.</p>
          </Empty>
        ) : (
          <ul className="rows" aria-label={`Principals ${dept.name} grants`}>
            {departmentPrincipals.map((p) => (
              <li key={p.id}>
                <span>
                  <Link to="/orgs/$slug/departments/principals/$principalId" params={{ slug: org.slug, principalId: p.id }}>
                    <code>{p.name}</code>
                  </Link>
                  {p.description && <span className="muted"> {p.description}</span>}
                </span>
                {admin && (
                  <ConfirmDialog
                    trigger={
                      <Button variant="secondary" size="small" aria-label={`Unlink ${p.name}`}>
                        Unlink
                      </Button>
                    }
                    title={`Stop granting ${p.name} through ${dept.name}?`}
                    confirmLabel="Unlink"
                    onConfirm={async () => {
                      await gql(UnlinkPrincipal, { orgId: org.id, principalId: p.id, departmentId: dept.id });
                      await changed(`${dept.name} no longer grants ${p.name}.`);
                    }}
                  >
                    <p>
                      New certificates of the people of {dept.name} no longer name <code>{p.name}</code>, unless they hold it otherwise. Certificates already issued keep it until
                      they expire or are revoked.
                    </p>
                  </ConfirmDialog>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="policy">
        <h2 id="policy">Certificate policy</h2>
        {certPolicy ? (
          <PolicyForm key={JSON.stringify(certPolicy)} orgId={org.id} departmentId={dept.id} deptName={dept.name} policy={certPolicy} onSaved={changed} />
        ) : (
          <p className="muted">Only the organization's owner and admins see and change certificate policies. The SSH screen shows the policy you sign under.</p>
        )}
      </section>

      {admin && (
        <section aria-labelledby="delete-dept" className="danger-zone">
          <h2 id="delete-dept">Delete the department</h2>
          <ConfirmDialog
            trigger={<Button variant="danger">Delete {dept.name}</Button>}
            title={`Delete the department ${dept.name}?`}
            confirmLabel="Delete department"
            onConfirm={async () => {
              await gql(DeleteDepartment, { orgId: org.id, departmentId: dept.id });
              carryToDirectory(`Department ${dept.name} deleted.`);
              await navigate({ to: "/orgs/$slug/departments", params: { slug: org.slug } });
              await qc.invalidateQueries({ queryKey: ["org", org.id] });
            }}
          >
            <p>
              Its {departmentMembers.length === 1 ? "1 person no longer gets" : `${departmentMembers.length} people no longer get`} the {departmentPrincipals.length}{" "}
              principal{departmentPrincipals.length === 1 ? "" : "s"} it grants in new certificates, and its certificate policy is deleted.
            </p>
          </ConfirmDialog>
        </section>
      )}
    </div>
  );
}

function DepartmentDetails({
  orgId,
  dept,
  onSaved,
}: {
  orgId: string;
  dept: { id: string; name: string; description?: string | null; canSudo: boolean };
  onSaved: (message: string) => Promise<void>;
}) {
  const [name, setName] = useState(dept.name);
  const [description, setDescription] = useState(dept.description ?? "");
  const [canSudo, setCanSudo] = useState(dept.canSudo);
  const save = useMutation({
    mutationFn: () => gql(UpdateDepartment, { orgId, departmentId: dept.id, input: { name, description, canSudo } }),
    onSuccess: (d) => onSaved(`${d.updateDepartment.name} saved.`),
  });
  const submit = useSubmit(() => save.mutateAsync());
  const fields = fieldErrorsOf(save.error);
  return (
    <details className="dir-edit">
      <summary>Rename or describe</summary>
      <Form validationBehavior="aria" aria-label="Department details" onSubmit={submit}>
        <Field label="Name" name="name" value={name} onChange={setName} isRequired error={fields.name} />
        <Field label="Description" name="description" value={description} onChange={setDescription} multiline error={fields.description} />
        <label className="dir-check">
          <input type="checkbox" checked={canSudo} onChange={(e) => setCanSudo(e.target.checked)} />
          Its members may use sudo (servers ask Keyward with the certificate's serial)
        </label>
        {!fields.name && !fields.description && <FormError error={save.error} />}
        <div className="actions">
          <Button type="submit" isPending={save.isPending}>
            Save
          </Button>
        </div>
      </Form>
    </details>
  );
}

/** A native select of what can be linked, and a Link button: one link at a time. */
export function LinkForm({
  label,
  formLabel,
  placeholder,
  options,
  onLink,
}: {
  label: string;
  formLabel: string;
  placeholder: string;
  options: Array<{ id: string; name: string }>;
  onLink: (o: { id: string; name: string }) => Promise<unknown>;
}) {
  const [chosen, setChosen] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = useSubmit(async () => {
    const option = options.find((o) => o.id === chosen);
    if (!option) return;
    setPending(true);
    setError(null);
    try {
      await onLink(option);
      setChosen("");
    } catch (e) {
      setError(e);
    } finally {
      setPending(false);
    }
  });
  return (
    <Form validationBehavior="aria" className="inline-form" aria-label={formLabel} onSubmit={submit}>
      <SelectField label={label} value={chosen} onChange={setChosen} isDisabled={options.length === 0}>
        <option value="">{placeholder}</option>
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </SelectField>
      <Button type="submit" isPending={pending} isDisabled={!chosen}>
        Link
      </Button>
      <FormError error={error} />
    </Form>
  );
}

/**
 * The department's certificate policy: lifetimes, whether members choose theirs, extensions. With
 * no policy stored, the form shows Keyward's defaults (and says so); saving stores a policy.
 */
function PolicyForm({
  orgId,
  departmentId,
  deptName,
  policy,
  onSaved,
}: {
  orgId: string;
  departmentId: string;
  deptName: string;
  policy: Policy;
  onSaved: (message: string) => Promise<void>;
}) {
  const [defaultHours, setDefaultHours] = useState(String(policy.defaultExpiryHours));
  const [maxHours, setMaxHours] = useState(String(policy.maxExpiryHours));
  const [allowUserExpiry, setAllowUserExpiry] = useState(policy.allowUserExpiry);
  const [allowed, setAllowed] = useState<string[]>(policy.allowedExtensions);
  const [custom, setCustom] = useState(policy.customExtensions.join("\n"));
  const [hardware, setHardware] = useState(policy.requireHardwareKey);
  const [touch, setTouch] = useState(policy.requireTouch);
  const [verify, setVerify] = useState(policy.requireVerify);
  const [local, setLocal] = useState<Record<string, string>>({});
  const save = useMutation({
    mutationFn: (input: { defaultExpiryHours: number; maxExpiryHours: number }) =>
      gql(UpdateCertPolicy, {
        orgId,
        departmentId,
        input: {
          ...input,
          allowUserExpiry,
          requireHardwareKey: hardware,
          requireTouch: hardware && touch,
          requireVerify: hardware && verify,
          allowedExtensions: policy.standardExtensions.filter((x) => allowed.includes(x)),
          customExtensions: custom
            .split(/[\s,]+/)
            .map((s) => s.trim())
            .filter(Boolean),
        },
      }),
    onSuccess: () => onSaved(`The certificate policy of ${deptName} is saved.`),
  });
  const submit = useSubmit(async () => {
    const d = wholeHours(defaultHours);
    const m = wholeHours(maxHours);
    const problems: Record<string, string> = {};
    if (typeof d === "string") problems.defaultExpiryHours = d;
    if (typeof m === "string") problems.maxExpiryHours = m;
    setLocal(problems);
    if (typeof d === "string" || typeof m === "string") return;
    await save.mutateAsync({ defaultExpiryHours: d, maxExpiryHours: m });
  });
  const api = fieldErrorsOf(save.error);
  const fields = { ...api, ...local };
  const fieldNames = ["defaultExpiryHours", "maxExpiryHours", "customExtensions", "allowedExtensions"];
  return (
    <Form validationBehavior="aria" aria-label={`Certificate policy of ${deptName}`} onSubmit={submit} className="dir-policy">
      {policy.isDefault ? (
        <p className="notice">
          <Badge>Defaults</Badge> No policy is stored for {deptName}: these are Keyward's defaults, and they apply until you save.
        </p>
      ) : (
        <p>
          <Badge tone="accent">Custom policy</Badge>
        </p>
      )}
      <div className="dir-hours">
        <Field
          label="Lifetime by default (hours)"
          name="defaultExpiryHours"
          inputMode="numeric"
          value={defaultHours}
          onChange={setDefaultHours}
          isRequired
          error={fields.defaultExpiryHours}
        />
        <Field
          label="Longest lifetime (hours)"
          name="maxExpiryHours"
          inputMode="numeric"
          value={maxHours}
          onChange={setMaxHours}
          isRequired
          error={fields.maxExpiryHours}
        />
      </div>
      <label className="dir-check">
        <input type="checkbox" checked={allowUserExpiry} onChange={(e) => setAllowUserExpiry(e.target.checked)} />
        Members may ask for another lifetime, up to the longest (<code>keyward ssh sign --hours</code>)
      </label>
      <fieldset className="dir-extensions">
        <legend>Extensions: what a certificate allows at login</legend>
        {policy.standardExtensions.map((x) => (
          <label key={x} className="dir-check">
            <input type="checkbox" checked={allowed.includes(x)} onChange={(e) => setAllowed(e.target.checked ? [...allowed, x] : allowed.filter((a) => a !== x))} />
            <span>
              <code>{x}</code> <span className="muted">{EXTENSION_WORDS[x] ?? ""}</span>
            </span>
          </label>
        ))}
        {fields.allowedExtensions && <p className="field-error">{fields.allowedExtensions}</p>}
      </fieldset>
      <fieldset className="dir-extensions">
        <legend>Keys: which SSH keys members may have certified</legend>
        <label className="dir-check">
          <input
            type="checkbox"
            checked={hardware}
            onChange={(e) => {
              setHardware(e.target.checked);
              if (!e.target.checked) {
                setTouch(false);
                setVerify(false);
              }
            }}
          />
          <span>
            Only hardware security keys <span className="muted">FIDO2 keys made with <code>ssh-keygen -t ed25519-sk</code> or <code>-t ecdsa-sk</code></span>
          </span>
        </label>
        <label className="dir-check">
          <input type="checkbox" checked={touch} disabled={!hardware} onChange={(e) => setTouch(e.target.checked)} />
          <span>
            Require a touch <span className="muted">the key's proof showed one; certificates never carry <code>no-touch-required</code></span>
          </span>
        </label>
        <label className="dir-check">
          <input type="checkbox" checked={verify} disabled={!hardware} onChange={(e) => setVerify(e.target.checked)} />
          <span>
            Require a PIN or biometric <span className="muted">the key's proof showed one; certificates carry <code>verify-required</code></span>
          </span>
        </label>
      </fieldset>
      <Field
        label="Custom extensions"
        name="customExtensions"
        multiline
        value={custom}
        onChange={setCustom}
        error={fields.customExtensions}
        description="One per line, such as login@example.com; servers that know them act on them."
      />
      {!fieldNames.some((f) => fields[f]) && <FormError error={save.error} />}
      <div className="actions">
        <Button type="submit" isPending={save.isPending}>
          Save policy
        </Button>
      </div>
    </Form>
  );
}
