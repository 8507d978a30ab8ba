import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql } from "../../graphql";
import { Button } from "../../ui/Button";
import { Field } from "../../ui/Field";
import { useSubmit } from "../../ui/useSubmit";
import { FormError } from "../../ui/States";

const CreateOrganization = graphql(`
  mutation CreateOrganization($input: CreateOrganizationInput!) {
    createOrganization(input: $input) { id name slug role }
  }
`);

/** /orgs/new: name it (the address is derived from the name unless given), and you own it. */
export function NewOrganization() {
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [description, setDescription] = useState("");
  const navigate = useNavigate();
  const qc = useQueryClient();
  const create = useMutation({
    mutationFn: () => gql(CreateOrganization, { input: { name, ...(slug ? { slug } : {}), ...(description ? { description } : {}) } }),
    onSuccess: async (data) => {
      await qc.invalidateQueries({ queryKey: ["shell"] });
      await navigate({ to: "/orgs/$slug", params: { slug: data.createOrganization.slug } });
    },
  });
  const submit = useSubmit(() => create.mutateAsync());
  const fields = create.error instanceof ApiError ? create.error.fieldErrors : {};
  const general = create.error && Object.keys(fields).length === 0 ? create.error : null;
  return (
    <div className="page narrow">
      <h1>Create an organization</h1>
      <p className="muted">You will own it: invite people, set its two-step policy, and give it an SSH certificate authority.</p>
      <Form
        validationBehavior="aria"
        onSubmit={submit}
      >
        <Field label="Name" name="name" value={name} onChange={setName} isRequired autoFocus error={fields.name} />
        <Field label="Address (slug)" name="slug" value={slug} onChange={setSlug} description="Lower-case letters, digits and dashes; derived from the name when left empty." error={fields.slug} />
        <Field label="Description" name="description" value={description} onChange={setDescription} multiline error={fields.description} />
        <FormError error={general} />
        <div className="actions">
          <Button type="submit" isPending={create.isPending}>
            Create organization
          </Button>
        </div>
      </Form>
    </div>
  );
}
