// Organization activity is the audit module's (issue 16); this path stays for existing importers.
export { ActivityService } from "../audit/activity.service.js";
